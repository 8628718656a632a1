import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'dossier:public';

/** Opt a route out of the global API-key guard. */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);
