<?php

declare(strict_types=1);

namespace Dossier\Tests;

use Dossier\Client;
use Dossier\Exception\DossierException;
use Dossier\Exception\InvalidArgumentException;
use Dossier\Exception\LogicException;
use Dossier\Response;
use Dossier\SearchResult;
use Dossier\Webhook;

final class ClientTest extends TestCase
{
    private const UUID4 = '/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/';

    private string|false $envKey;
    private string|false $envBaseUrl;

    protected function setUp(): void
    {
        parent::setUp();
        $this->envKey = getenv('DOSSIER_API_KEY');
        $this->envBaseUrl = getenv('DOSSIER_BASE_URL');
        putenv('DOSSIER_API_KEY');
        putenv('DOSSIER_BASE_URL');
    }

    protected function tearDown(): void
    {
        putenv($this->envKey === false ? 'DOSSIER_API_KEY' : 'DOSSIER_API_KEY=' . $this->envKey);
        putenv($this->envBaseUrl === false ? 'DOSSIER_BASE_URL' : 'DOSSIER_BASE_URL=' . $this->envBaseUrl);
    }

    public function testApiKeyComesFromTheEnvironment(): void
    {
        putenv('DOSSIER_API_KEY=dsk_from_env');
        $this->server->script([['body' => ['status' => 'success', 'account' => ['id' => 'acct_1'], 'credits_remaining' => 5]]]);

        (new Client(baseUrl: $this->server->baseUrl))->account();

        $this->assertSame('Bearer dsk_from_env', $this->server->requests()[0]['headers']['authorization']);
    }

    public function testAnExplicitKeyWinsOverTheEnvironment(): void
    {
        putenv('DOSSIER_API_KEY=dsk_from_env');
        $this->server->script([['body' => self::accountBody()]]);

        (new Client('dsk_explicit', baseUrl: $this->server->baseUrl))->account();

        $this->assertSame('Bearer dsk_explicit', $this->server->requests()[0]['headers']['authorization']);
    }

    public function testTheKeyIsTrimmedAndOneWithAControlCharacterIsRefusedAsInTheOtherClients(): void
    {
        // A key read from a file keeps its line break.
        putenv("DOSSIER_API_KEY= dsk_from_env\n");
        $this->server->script([], ['body' => self::accountBody()]);
        (new Client(" dsk_file\r\n", baseUrl: $this->server->baseUrl))->account();
        (new Client('  ', baseUrl: $this->server->baseUrl))->account(); // a blank key is no key
        $this->assertSame(['Bearer dsk_file', 'Bearer dsk_from_env'], array_map(static fn (array $r): string => $r['headers']['authorization'], $this->server->requests()));
        foreach (["dsk_SECRET\nX-Injected: 1", "dsk_SECRET\0x", "dsk_\tSECRET"] as $key) {
            try {
                new Client($key, baseUrl: $this->server->baseUrl);
                $this->fail('expected InvalidArgumentException for ' . json_encode($key));
            } catch (InvalidArgumentException $e) {
                $this->assertStringNotContainsString('SECRET', $e->getMessage());
            }
        }
    }

    public function testAnEmptyIdIsRefusedBeforeAnythingIsSentAsInTheOtherClients(): void
    {
        // Sent, GET /v1/searches/ is a 404 "no such route", which reads like an unknown search.
        $client = $this->client();
        foreach ([
            fn () => $client->getSearch(''),
            fn () => $client->getBatch(''),
            fn () => $client->revokeKey(''),
            fn () => $client->deleteWebhook(''),
            fn () => $client->webhookDeliveries(''),
        ] as $i => $call) {
            try {
                $call();
                $this->fail("expected InvalidArgumentException from call $i");
            } catch (InvalidArgumentException) {
            }
        }
        $this->assertSame([], $this->server->requests());
    }

    public function testNoKeyAtAllIsRefusedAtConstruction(): void
    {
        $this->expectException(InvalidArgumentException::class);
        $this->expectExceptionMessage('DOSSIER_API_KEY');
        new Client(baseUrl: $this->server->baseUrl);
    }

    public function testDefaultBaseUrl(): void
    {
        $this->assertSame('http://127.0.0.1:3000', (new Client('dsk_x'))->baseUrl);
        $this->assertSame('http://example.test:8080', (new Client('dsk_x', baseUrl: 'http://example.test:8080/'))->baseUrl);
    }

    public function testTheBaseUrlComesFromTheEnvironmentAsInTheOtherClients(): void
    {
        // The argument, else DOSSIER_BASE_URL, else http://127.0.0.1:3000; a blank one counts as none.
        putenv("DOSSIER_BASE_URL= https://dossier.example.com/api/ \n");
        $this->assertSame('https://dossier.example.com/api', (new Client('dsk_x'))->baseUrl);
        $this->assertSame('http://10.0.0.1:8080', (new Client('dsk_x', baseUrl: 'http://10.0.0.1:8080'))->baseUrl);
        $this->assertSame('https://dossier.example.com/api', (new Client('dsk_x', baseUrl: ' '))->baseUrl);
        putenv('DOSSIER_BASE_URL=  ');
        $this->assertSame('http://127.0.0.1:3000', (new Client('dsk_x'))->baseUrl);
        putenv('DOSSIER_BASE_URL=localhost:3000');
        $this->expectException(InvalidArgumentException::class);
        $this->expectExceptionMessage('DOSSIER_BASE_URL');
        new Client('dsk_x');
    }

    public function testTheEnvironmentNamesTheServerAndTheKey(): void
    {
        $this->server->script([
            ['body' => ['status' => 'success', 'account' => ['id' => 'acct_1'], 'credits_remaining' => 5]],
            ['body' => ['status' => 'success', 'api_key' => 'dsk_second', 'key_id' => 'key_2']],
        ]);
        putenv('DOSSIER_BASE_URL=' . $this->server->baseUrl);
        putenv('DOSSIER_API_KEY=dsk_env123');

        (new Client())->account();
        Client::login('a@example.com', 'correct horse');

        [$account, $login] = $this->server->requests();
        $this->assertSame(['/v1/account', '/v1/auth/login'], [$account['path'], $login['path']]);
        $this->assertSame('Bearer dsk_env123', $account['headers']['authorization']);
    }

    public function testStandardHeaders(): void
    {
        $this->server->script([self::success(), ['body' => self::accountBody()]]);
        $client = $this->client();

        $client->verifyPhone('+14155552671');
        $client->account();

        [$post, $get] = $this->server->requests();
        $this->assertSame('POST', $post['method']);
        $this->assertSame('Bearer dsk_test_key', $post['headers']['authorization']);
        $this->assertSame('dossier-php/' . Client::VERSION, $post['headers']['user-agent']);
        $this->assertSame('application/json', $post['headers']['accept']);
        $this->assertSame('application/json', $post['headers']['content-type']);
        $this->assertSame('wait=3', $post['headers']['prefer']); // min(10 s, pollTimeout 5, timeout 5 - 2)
        $this->assertSame('GET', $get['method']);
        $this->assertSame('/v1/account', $get['path']);
        $this->assertArrayNotHasKey('content-type', $get['headers']);
        $this->assertArrayNotHasKey('idempotency-key', $get['headers']);
        $this->assertSame('', $get['body']);
    }

    public function testPreferWaitNeverOutlastsThePollDeadlineOrTheHttpTimeout(): void
    {
        $this->server->script(array_fill(0, 4, self::success()));

        (new Client('dsk_x', baseUrl: $this->server->baseUrl))->verifyPhone('+14155552671');
        (new Client('dsk_x', baseUrl: $this->server->baseUrl, pollTimeout: 4.5))->verifyPhone('+14155552671');
        (new Client('dsk_x', baseUrl: $this->server->baseUrl))->verifyPhone('+14155552671', pollTimeout: 2.0);
        (new Client('dsk_x', baseUrl: $this->server->baseUrl, timeout: 1.0))->verifyPhone('+14155552671');

        $this->assertSame(
            ['wait=10', 'wait=4', 'wait=2', 'wait=0'],
            array_map(static fn (array $r): string => $r['headers']['prefer'], $this->server->requests()),
        );
    }

    public function testSearchWithPersonFieldsGoesToThePersonEndpoint(): void
    {
        $this->server->script([self::success()]);

        $this->client()->search(name: 'John Smith');

        $request = $this->server->requests()[0];
        $this->assertSame('/v1/search/person', $request['path']);
        $this->assertSame('{"name":"John Smith"}', $request['body']);
    }

    public function testSearchGenericFormGoesToSearch(): void
    {
        $this->server->script([self::success(), self::success()]);
        $client = $this->client();

        $client->search(query: 'John Smith', type: 'person', country: 'US');
        $client->search(query: 'Acme', type: 'company');

        [$first, $second] = $this->server->requests();
        $this->assertSame('/v1/search', $first['path']);
        $this->assertSame(['query' => 'John Smith', 'type' => 'person', 'country' => 'US'], $first['json']);
        $this->assertSame(['query' => 'Acme', 'type' => 'company'], $second['json']);
    }

    public function testSearchRefusesMixedForms(): void
    {
        $this->expectException(InvalidArgumentException::class);
        try {
            $this->client()->search(query: 'John Smith', type: 'person', name: 'John Smith');
        } finally {
            $this->assertSame([], $this->server->requests());
        }
    }

    public function testBodiesOmitAbsentFields(): void
    {
        $this->server->script(array_fill(0, 7, self::success()));
        $client = $this->client();

        $client->searchPerson(name: 'Jane Doe', ageRange: '30-40');
        $client->searchPerson(email: 'jane@example.com', location: 'Austin, TX', permissiblePurpose: 'employment');
        $client->searchCompany(domain: 'example.com');
        $client->searchCompany(companyName: 'Acme', registrationNumber: 'HRB 1', country: 'DE');
        $client->verifyEmail('jane@example.com');
        $client->verifyPhone('4155552671', country: 'US');
        $client->search(username: 'jdoe');

        $this->assertSame([
            ['/v1/search/person', '{"name":"Jane Doe","age_range":"30-40"}'],
            ['/v1/search/person', '{"email":"jane@example.com","location":"Austin, TX","permissible_purpose":"employment"}'],
            ['/v1/search/company', '{"domain":"example.com"}'],
            ['/v1/search/company', '{"company_name":"Acme","registration_number":"HRB 1","country":"DE"}'],
            ['/v1/verify/email', '{"email":"jane@example.com"}'],
            ['/v1/verify/phone', '{"phone":"4155552671","country":"US"}'],
            ['/v1/search/person', '{"username":"jdoe"}'],
        ], array_map(static fn (array $r): array => [$r['path'], $r['body']], $this->server->requests()));
    }

    public function testNamedArgumentsCanBeSpreadFromAnArray(): void
    {
        $this->server->script([self::success()]);

        $this->client()->searchPerson(...['name' => 'Jane Doe', 'location' => 'Berlin']);

        $this->assertSame(['name' => 'Jane Doe', 'location' => 'Berlin'], $this->server->requests()[0]['json']);
    }

    public function testSearchResultExposesTheEnvelope(): void
    {
        $phone = ['input' => '+14155552671', 'e164' => '+14155552671', 'valid' => true];
        $this->server->script([self::success([$phone], 41, 'srch_abc', ['X-Request-Id' => 'req_42'])]);

        $result = $this->client()->verifyPhone('+14155552671');

        $this->assertInstanceOf(SearchResult::class, $result);
        $this->assertSame('success', $result->status);
        $this->assertTrue($result->isSuccess());
        $this->assertFalse($result->isPending());
        $this->assertSame('srch_abc', $result->searchId);
        $this->assertSame([$phone], $result->results);
        $this->assertSame(41, $result->creditsRemaining);
        $this->assertSame([['provider' => 'libphonenumber', 'outcome' => 'found', 'took_ms' => 1]], $result->sources);
        $this->assertSame(1, $result->creditsSpent);
        $this->assertFalse($result->replayed);
        $this->assertSame('req_42', $result->requestId);
        $this->assertSame(200, $result->httpStatus);
        $this->assertSame(41, $result['credits_remaining']);
        $this->assertSame('srch_abc', $result['search_id']);
        $this->assertSame(41, json_decode($result->rawBody, true)['credits_remaining']);
        $this->assertSame($result->data, $result->toArray());
    }

    public function testReplayIsReported(): void
    {
        $this->server->script([self::success([], 7, 'srch_1', ['Idempotent-Replayed' => 'true', 'X-Credits-Spent' => '0'])]);

        $result = $this->client()->verifyPhone('+14155552671', idempotencyKey: 'order-1');

        $this->assertTrue($result->replayed);
        $this->assertSame(0, $result->creditsSpent);
    }

    public function testEveryLookupSendsAGeneratedUuid4IdempotencyKey(): void
    {
        $this->server->script([self::success(), self::success(), self::success()]);
        $client = $this->client();

        $client->search(name: 'John Smith');
        $client->verifyEmail('a@example.com');
        $client->searchCompany(companyName: 'Acme');

        $keys = array_map(static fn (array $r): string => $r['headers']['idempotency-key'], $this->server->requests());
        foreach ($keys as $key) {
            $this->assertMatchesRegularExpression(self::UUID4, $key);
        }
        $this->assertCount(3, array_unique($keys));
    }

    public function testTheCallersIdempotencyKeyIsSent(): void
    {
        $this->server->script([self::success()]);

        $this->client()->verifyPhone('+14155552671', idempotencyKey: 'order-1234');

        $this->assertSame('order-1234', $this->server->requests()[0]['headers']['idempotency-key']);
    }

    public function testAnIdempotencyKeyTheGatewayWouldRefuseIsRefusedBeforeSending(): void
    {
        // 1–255 printable ASCII characters (API.md); a CR/LF must never reach the request's headers.
        $this->server->script([], self::success());
        $client = $this->client();
        foreach (["k\r\nX-Injected: 1", "k\n", '', 'has space', str_repeat('x', 256), 'clé', "k\0"] as $key) {
            try {
                $client->verifyEmail('a@example.com', idempotencyKey: $key);
                $this->fail('expected InvalidArgumentException for ' . json_encode($key));
            } catch (InvalidArgumentException) {
            }
            try {
                $client->batch([['kind' => 'email', 'input' => ['email' => 'a@example.com']]], idempotencyKey: $key);
                $this->fail('expected InvalidArgumentException for ' . json_encode($key));
            } catch (InvalidArgumentException) {
            }
        }
        $this->assertSame([], $this->server->requests(), 'nothing was sent');

        $client->verifyEmail('a@example.com', idempotencyKey: '~' . str_repeat('x', 254));
        $this->assertSame('~' . str_repeat('x', 254), $this->server->requests()[0]['headers']['idempotency-key']);
    }

    public function testAnApiKeyWithALineBreakIsNeverSentAsHeaders(): void
    {
        $this->server->script([], self::success());

        try {
            $this->client(['apiKey' => "dsk_x\r\nX-Injected: 1"])->account();
            $this->fail('expected InvalidArgumentException');
        } catch (InvalidArgumentException $e) {
            $this->assertStringNotContainsString('dsk_x', $e->getMessage());
        }
        $this->assertSame([], $this->server->requests());
    }

    public function testVarDumpAndPrintRNeverShowAWholeKeyOrSecret(): void
    {
        $key = 'dsk_SECRETKEYVALUE0000000000';
        $this->server->script([
            ['status' => 201, 'body' => ['status' => 'success', 'account' => ['id' => 'acct_1'], 'api_key' => $key, 'credits_remaining' => 3]],
            ['body' => ['status' => 'success', 'api_key' => $key, 'key_id' => 'key_2']],
            ['status' => 201, 'body' => ['status' => 'success', 'webhook' => ['id' => 'wh_1'], 'secret' => 'whsec_SECRETVALUE000']],
        ]);
        $client = $this->client(['apiKey' => $key]);
        $registered = Client::register('a@example.com', 'correct horse', baseUrl: $this->server->baseUrl);
        $loggedIn = Client::login('a@example.com', 'correct horse', baseUrl: $this->server->baseUrl);
        $hook = $client->createWebhook('https://example.com/hook');

        foreach ([$client, $registered, $loggedIn, $hook] as $object) {
            ob_start();
            var_dump($object);
            $dumped = (string) ob_get_clean();
            $printed = print_r($object, true);
            $this->assertStringNotContainsString('SECRET', $dumped);
            $this->assertStringNotContainsString('SECRET', $printed);
        }
        $this->assertStringContainsString('dsk_SECR…', print_r($client, true));
        $this->assertStringContainsString('dsk_SECR…', print_r($loggedIn, true));
        $this->assertStringContainsString('whsec_…', print_r($hook, true));
        // Only the printed form is shortened.
        $this->assertSame([$key, $key, 'whsec_SECRETVALUE000'], [$registered->apiKey, $loggedIn->data['api_key'], $hook->secret]);
        $this->assertStringContainsString($key, $loggedIn->rawBody);
    }

    public function testVarExportAndSerializeNeverShowTheKey(): void
    {
        $key = 'dsk_SECRETKEYVALUE0000000000';
        $this->server->script([], ['body' => ['status' => 'success', 'account' => ['id' => 'acct_1'], 'credits_remaining' => 3]]);
        $fresh = $this->client(['apiKey' => $key]);
        $used = $this->client(['apiKey' => $key]);
        $used->account(); // its transport now holds a cURL handle as well

        foreach (['a fresh client' => $fresh, 'a used client' => $used] as $what => $client) {
            $exported = var_export($client, true);
            $this->assertStringNotContainsString('SECRET', $exported, $what);
            $this->assertStringContainsString('dsk_SECR…', $exported, $what); // the shortened hint is all there is
            $this->assertStringNotContainsString('SECRET', var_export((array) $client, true), $what);
            ob_start();
            debug_zval_dump($client);
            $this->assertStringNotContainsString('SECRET', (string) ob_get_clean(), $what);
            try {
                $serialized = serialize($client);
                $this->fail("$what was serialized: $serialized");
            } catch (LogicException $e) {
                $this->assertInstanceOf(DossierException::class, $e);
                $this->assertStringNotContainsString('SECRET', (string) $e);
            }
        }
        try {
            unserialize('O:14:"Dossier\\Client":1:{s:7:"baseUrl";s:18:"http://127.0.0.1:1";}');
            $this->fail('a client was unserialized');
        } catch (LogicException $e) {
            $this->assertStringContainsString('serialize', $e->getMessage());
        }
        // A clone still works, with the same key.
        $clone = clone $used;
        $clone->account();
        $this->assertSame('Bearer ' . $key, $this->server->requests()[1]['headers']['authorization']);
    }

    public function testAnExceptionTraceNeverShowsAKeyPasswordOrSecret(): void
    {
        // PHP's own defaults (no php.ini, as in the official Docker image) print each call's arguments in
        // a trace, strings up to 15 characters whole: a short password in full, a key's or a secret's start.
        $ignoreArgs = ini_set('zend.exception_ignore_args', '0');
        $maxLen = ini_set('zend.exception_string_param_max_len', '1000');
        try {
            $this->server->script([self::error(401, 'invalid_credentials'), self::error(409, 'email_taken')]);
            $traces = [];
            foreach ([
                fn () => Client::login('a@example.com', 'SECRETpw', baseUrl: $this->server->baseUrl),
                fn () => Client::register('a@example.com', 'SECRETpw', baseUrl: $this->server->baseUrl),
                fn () => new Client('dsk_SECRETKEYVALUE0000000000', $this->server->baseUrl, timeout: -1.0),
                fn () => Webhook::verify('{}', 't=1,v1=' . str_repeat('0', 64), 'whsec_SECRETVALUE000', null),
            ] as $call) {
                try {
                    $call();
                    $this->fail('expected an exception');
                } catch (DossierException $e) {
                    $traces[] = (string) $e;
                }
            }
            foreach ($traces as $trace) {
                $this->assertStringContainsString('Stack trace', $trace);
                $this->assertStringNotContainsString('SECRET', $trace);
            }
            $this->assertStringContainsString("'a@example.com'", $traces[0]); // other arguments still show
        } finally {
            ini_set('zend.exception_ignore_args', (string) $ignoreArgs);
            ini_set('zend.exception_string_param_max_len', (string) $maxLen);
        }
    }

    public function testAccountAndKeyManagement(): void
    {
        $this->server->script([
            ['body' => ['status' => 'success', 'account' => ['id' => 'acct_1', 'email' => 'a@example.com', 'created_at' => '2026-01-01T00:00:00Z'], 'credits_remaining' => 3]],
            ['status' => 201, 'body' => ['status' => 'success', 'api_key' => 'dsk_new', 'key_id' => 'key_2']],
            ['status' => 201, 'body' => ['status' => 'success', 'api_key' => 'dsk_new2', 'key_id' => 'key_3']],
            ['body' => ['status' => 'success', 'keys' => [['id' => 'key_1', 'prefix' => 'dsk_abcd', 'name' => null, 'created_at' => '2026-01-01T00:00:00Z', 'last_used_at' => null, 'revoked_at' => null]]]],
            ['body' => ['status' => 'success', 'key' => ['id' => 'key_2', 'revoked_at' => '2026-01-02T00:00:00Z']]],
        ]);
        $client = $this->client();

        $account = $client->account();
        $created = $client->createKey('ci');
        $unnamed = $client->createKey();
        $keys = $client->listKeys();
        $revoked = $client->revokeKey('key_2');

        $this->assertInstanceOf(Response::class, $account);
        $this->assertSame('a@example.com', $account->account['email']);
        $this->assertSame(3, $account->creditsRemaining);
        $this->assertSame('dsk_new', $created->apiKey);
        $this->assertSame('key_2', $created['key_id']);
        $this->assertSame(201, $created->httpStatus);
        $this->assertSame('dsk_new2', $unnamed->apiKey);
        $this->assertSame('key_1', $keys->keys[0]['id']);
        $this->assertSame('key_2', $revoked->key['id']);

        $requests = $this->server->requests();
        $this->assertSame(
            [['GET', '/v1/account', ''], ['POST', '/v1/auth/keys', '{"name":"ci"}'], ['POST', '/v1/auth/keys', '{}'], ['GET', '/v1/auth/keys', ''], ['DELETE', '/v1/auth/keys/key_2', '']],
            array_map(static fn (array $r): array => [$r['method'], $r['path'], $r['body']], $requests),
        );
        foreach ($requests as $r) {
            $this->assertArrayNotHasKey('idempotency-key', $r['headers']);
        }
        $this->assertArrayNotHasKey('content-type', $requests[4]['headers']);
    }

    public function testRegisterAndLoginAreStaticAndSendNoKey(): void
    {
        $this->server->script([
            ['status' => 201, 'body' => ['status' => 'success', 'account' => ['id' => 'acct_1', 'email' => 'a@example.com', 'created_at' => '2026-01-01T00:00:00Z'], 'api_key' => 'dsk_first', 'credits_remaining' => 3]],
            ['body' => ['status' => 'success', 'api_key' => 'dsk_second', 'key_id' => 'key_2']],
        ]);

        $registered = Client::register('a@example.com', 'correct horse', baseUrl: $this->server->baseUrl);
        $loggedIn = Client::login('a@example.com', 'correct horse', baseUrl: $this->server->baseUrl);

        $this->assertSame('dsk_first', $registered->apiKey);
        $this->assertSame(3, $registered->creditsRemaining);
        $this->assertSame('dsk_second', $loggedIn['api_key']);
        $this->assertSame('key_2', $loggedIn->keyId);
        [$r1, $r2] = $this->server->requests();
        $this->assertSame(['/v1/auth/register', ['email' => 'a@example.com', 'password' => 'correct horse']], [$r1['path'], $r1['json']]);
        $this->assertSame('/v1/auth/login', $r2['path']);
        $this->assertArrayNotHasKey('authorization', $r1['headers']);
        $this->assertArrayNotHasKey('authorization', $r2['headers']);
        $this->assertArrayNotHasKey('idempotency-key', $r1['headers']);
    }

    public function testARepeatedResponseHeaderIsJoinedWithCommasAsInTheOtherClients(): void
    {
        // RFC 9110 section 5.3: a field sent on several lines is one comma-separated list. Python joins them so,
        // and so do JavaScript's fetch Headers and Ruby's Net::HTTP.
        $account = ['status' => 'success', 'account' => ['id' => 'acct_1', 'email' => 'a@example.com', 'created_at' => '2026-01-01T00:00:00Z'], 'credits_remaining' => 3];
        $this->server->script([
            ['headers' => ['Warning' => ['199 - "first"', '199 - "second"'], 'X-Request-Id' => 'req_1'], 'body' => $account],
            ['headers' => ['Warning' => ['199 - "only"']], 'body' => self::success()['body']],
        ]);
        $client = $this->client();

        $this->assertSame('199 - "first", 199 - "second"', $client->account()->headers['warning']);
        $this->assertSame('199 - "only"', $client->verifyPhone('+14155552671')->headers['warning']);
    }

    public function testGetSearchEncodesTheId(): void
    {
        $this->server->script([self::success([], 5, 'srch_9')]);

        $result = $this->client()->getSearch('srch_9');

        $this->assertSame('srch_9', $result->searchId);
        $this->assertSame(['GET', '/v1/searches/srch_9'], [$this->server->requests()[0]['method'], $this->server->requests()[0]['path']]);
    }

    public function testResponsesAreReadOnly(): void
    {
        $this->server->script([self::success()]);
        $result = $this->client()->verifyPhone('+14155552671');

        $this->expectException(\LogicException::class);
        $result['status'] = 'changed';
    }

    public function testEveryLibraryExceptionIsADossierException(): void
    {
        try {
            $this->client()->search(query: 'x', name: 'y');
            $this->fail('expected an exception');
        } catch (DossierException $e) {
            $this->assertInstanceOf(\InvalidArgumentException::class, $e);
        }
    }
}
