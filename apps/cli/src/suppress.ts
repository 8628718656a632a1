import type { DataSource } from 'typeorm';
import { isDomainError, parseSuppressionSubject, type SuppressionSubject } from '@dossier/domain';
import { SuppressionsRepository, type SuppressionRow } from '@dossier/persistence';

/** The suppression list's commands (ADR 0015): `suppress:add`, `suppress:remove`, `suppress:list`. */
export const SUPPRESS_USAGE = `  suppress:add --email E | --phone P | --name N --birth-year Y
                                 add a data subject who opted out: no lookup answers them again;
                                 adding one listed already changes nothing; a national --phone is
                                 read in DEFAULT_REGION
  suppress:remove --email E | --phone P | --name N --birth-year Y
                                 take the subject off the list; exit 1 when it is not listed
  suppress:list                  the list: id, kind, a masked hint, when added`;

/** The options `suppress:add` and `suppress:remove` take (`--name value` or `--name=value`). */
export const SUPPRESS_OPTIONS = ['email', 'phone', 'name', 'birth-year'];

export type SuppressCommand =
  { name: 'suppress:add' | 'suppress:remove'; subject: SuppressionSubject } | { name: 'suppress:list' };

/**
 * The subject named by the options, or a message naming the bad option (the caller makes it a usage
 * error): the same rules as `POST /admin/suppressions`, a national `--phone` read in `defaultRegion`.
 */
export function suppressCommand(
  name: 'suppress:add' | 'suppress:remove',
  positional: string[],
  values: Map<string, string>,
  defaultRegion: string,
): SuppressCommand | { problem: string } {
  if (positional.length > 0) return { problem: `${name}: unexpected argument "${positional[0]}"` };
  try {
    const subject = parseSuppressionSubject(
      {
        ...(values.has('email') ? { email: values.get('email') } : {}),
        ...(values.has('phone') ? { phone: values.get('phone') } : {}),
        ...(values.has('name') ? { name: values.get('name') } : {}),
        ...(values.has('birth-year') ? { birth_year: values.get('birth-year') } : {}),
      },
      defaultRegion,
    );
    return { name, subject };
  } catch (error) {
    if (!isDomainError(error) || error.code !== 'validation_error') throw error;
    const issues = (error.details ?? []).map((d) =>
      d.field === 'body'
        ? 'give exactly one of --email, --phone, or --name with --birth-year'
        : `--${d.field.replace('_', '-')} ${d.issue}`,
    );
    return { problem: `${name}: ${issues.join('; ')}` };
  }
}

export async function runSuppress(db: DataSource, command: SuppressCommand): Promise<number> {
  const list = new SuppressionsRepository(db);
  switch (command.name) {
    case 'suppress:add': {
      const { entry, created } = await list.add(command.subject);
      console.log(`${command.name}: ${created ? 'added' : 'listed already:'} ${describe(entry)}`);
      return 0;
    }
    case 'suppress:remove': {
      const removed = await list.remove(command.subject);
      if (!removed) {
        console.error(`${command.name}: ${command.subject.kind} ${command.subject.hint} is not on the list`);
        return 1;
      }
      console.log(`${command.name}: removed ${describe(removed)}`);
      return 0;
    }
    case 'suppress:list': {
      const entries = await list.list();
      if (entries.length === 0) console.log('suppress:list: the list is empty');
      for (const entry of entries) console.log(describe(entry));
      return 0;
    }
  }
}

function describe(entry: SuppressionRow): string {
  return `${entry.id}  ${entry.kind}  ${entry.hint}  ${entry.created_at.toISOString()}`;
}
