<?php

declare(strict_types=1);

namespace Dossier\Exception;

// SearchTimeoutException is the deprecated name of PollTimeoutException (an alias of the same class, declared in
// PollTimeoutException.php): loading that file declares both.
class_exists(PollTimeoutException::class);
