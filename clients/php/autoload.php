<?php

/*
 * PSR-4 autoloader for installs without Composer (and for this repository's tests, since
 * Composer is not available in CI). Composer users get the same mapping from composer.json
 * ("Dossier\\" => "src/") through vendor/autoload.php and do not need this file.
 *
 *     require __DIR__ . '/path/to/clients/php/autoload.php';
 */

declare(strict_types=1);

spl_autoload_register(static function (string $class): void {
    static $prefixes = [
        'Dossier\\Tests\\' => __DIR__ . '/tests/',
        'Dossier\\' => __DIR__ . '/src/',
    ];
    foreach ($prefixes as $prefix => $dir) {
        if (strncmp($class, $prefix, strlen($prefix)) === 0) {
            $file = $dir . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
            if (is_file($file)) {
                require $file;
            }

            return;
        }
    }
});
