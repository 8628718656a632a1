<?php

declare(strict_types=1);

namespace Dossier\Exception;

/**
 * 404 not_found: an unknown route, or a search id / key id that does not exist or belongs to another account.
 */
class NotFoundException extends ApiException
{
}
