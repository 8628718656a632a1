<?php

declare(strict_types=1);

namespace Dossier\Tests;

/**
 * Starts `php -S 127.0.0.1:<free port> tests/fixtures/router.php` once per test run and lets a
 * test script its answers and read back the requests it saw (see fixtures/router.php).
 */
final class FakeServer
{
    private static ?self $instance = null;

    /** @var resource */
    private $process;
    public readonly string $baseUrl;
    private readonly string $dir;

    private function __construct()
    {
        $this->dir = sys_get_temp_dir() . '/dossier-php-fake-' . getmypid() . '-' . bin2hex(random_bytes(4));
        mkdir($this->dir, 0700, true);
        $port = self::freePort();
        $env = getenv();
        $env['DOSSIER_FAKE_DIR'] = $this->dir;
        // Several workers, so a request the client gave up on (timeout tests) does not hold up the next one.
        $env['PHP_CLI_SERVER_WORKERS'] = '3';
        $process = proc_open(
            [PHP_BINARY, '-S', '127.0.0.1:' . $port, __DIR__ . '/fixtures/router.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes,
            null,
            $env,
        );
        if (!is_resource($process)) {
            throw new \RuntimeException('could not start php -S');
        }
        $this->process = $process;
        $this->baseUrl = 'http://127.0.0.1:' . $port;
        $this->waitUntilListening($port);
    }

    public static function get(): self
    {
        if (self::$instance === null) {
            self::$instance = new self();
            register_shutdown_function([self::$instance, 'stop']);
        }

        return self::$instance;
    }

    /**
     * Sets the answers for the next requests, in order, and forgets the requests seen so far.
     *
     * @param list<array<string, mixed>> $responses
     * @param array<string, mixed>|null $default answers every request after $responses are used up
     */
    public function script(array $responses, ?array $default = null): void
    {
        $script = ['responses' => $responses];
        if ($default !== null) {
            $script['default'] = $default;
        }
        file_put_contents($this->dir . '/script.json', json_encode($script, JSON_UNESCAPED_SLASHES));
        file_put_contents($this->dir . '/requests.jsonl', '');
    }

    /**
     * The requests seen since the last script(): method, path, query, headers (lower-cased names),
     * body (raw string), json (decoded body or null), time (microtime).
     *
     * @return list<array<string, mixed>>
     */
    public function requests(): array
    {
        $out = [];
        foreach (file($this->dir . '/requests.jsonl', FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) ?: [] as $line) {
            $r = json_decode($line, true);
            $r['json'] = $r['body'] === '' ? null : json_decode($r['body'], true);
            $out[] = $r;
        }

        return $out;
    }

    public function stop(): void
    {
        if (is_resource($this->process)) {
            // With PHP_CLI_SERVER_WORKERS the workers are children of `php -S` and outlive it when
            // only it is signalled: stop them first, by pid.
            $pid = proc_get_status($this->process)['pid'];
            foreach (function_exists('posix_kill') ? self::childrenOf($pid) : [] as $child) {
                posix_kill($child, 15); // SIGTERM (the constant needs ext-pcntl)
            }
            proc_terminate($this->process);
            proc_close($this->process);
        }
        foreach (glob($this->dir . '/*') ?: [] as $file) {
            @unlink($file);
        }
        @rmdir($this->dir);
    }

    /** @return list<int> pids whose parent is $pid (Linux /proc) */
    private static function childrenOf(int $pid): array
    {
        $children = [];
        foreach (glob('/proc/[0-9]*/stat') ?: [] as $statFile) {
            $stat = @file_get_contents($statFile);
            // pid (comm) state ppid ...: comm may contain spaces, so split after the last ')'
            if ($stat !== false && ($close = strrpos($stat, ')')) !== false) {
                $fields = explode(' ', substr($stat, $close + 2));
                if ((int) ($fields[1] ?? 0) === $pid) {
                    $children[] = (int) basename(dirname($statFile));
                }
            }
        }

        return $children;
    }

    /** A port nothing listens on right now (the kernel's pick for port 0, released again). */
    public static function freePort(): int
    {
        $server = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
        if ($server === false) {
            throw new \RuntimeException("no free port: $errstr");
        }
        $name = stream_socket_get_name($server, false);
        fclose($server);

        return (int) substr((string) $name, strrpos((string) $name, ':') + 1);
    }

    private function waitUntilListening(int $port): void
    {
        $deadline = microtime(true) + 5;
        while (microtime(true) < $deadline) {
            $socket = @fsockopen('127.0.0.1', $port, $errno, $errstr, 0.2);
            if ($socket !== false) {
                fclose($socket);

                return;
            }
            usleep(20_000);
        }
        $this->stop();
        throw new \RuntimeException("php -S did not start listening on port $port");
    }
}
