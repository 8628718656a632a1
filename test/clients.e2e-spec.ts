import { REPO_ROOT, Stack, runCommand } from '@dossier/testing';

const ROOT = REPO_ROOT;

/** The four client libraries' own suites: unit (fake server) and integration (this repo's real gateway + worker). */
const SUITES: { client: string; unit: string; integration: string }[] = [
  {
    client: 'python',
    unit: 'python3 -m unittest discover -s clients/python/tests -t clients/python',
    integration: 'python3 -m unittest discover -s clients/python/integration -t clients/python',
  },
  {
    client: 'javascript',
    unit: 'node_modules/.bin/tsc -p clients/javascript/tsconfig.test.json && node --test clients/javascript/.test-build/test/*.test.js',
    integration: 'node --test clients/javascript/.test-build/integration/*.test.js',
  },
  {
    client: 'ruby',
    unit: `ruby -e 'Dir["clients/ruby/test/*_test.rb"].sort.each { |f| require File.expand_path(f) }'`,
    integration: `ruby -e 'Dir["clients/ruby/integration/*_test.rb"].sort.each { |f| require File.expand_path(f) }'`,
  },
  {
    client: 'php',
    unit: 'phpunit -c clients/php/phpunit.xml --testsuite unit',
    integration: 'phpunit -c clients/php/phpunit.xml --testsuite integration',
  },
];

function run(command: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return runCommand(['sh', '-c', command], { cwd: ROOT, env: { ...process.env, ...env } });
}

describe('client libraries (Python, JavaScript, Ruby, PHP)', () => {
  let stack: Stack;

  beforeAll(async () => {
    // The clients' integration suites expect a 3-credit signup grant (they spend it and then see 402).
    stack = await Stack.start({ label: 'clients', env: { SIGNUP_CREDITS: '3' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  describe.each(SUITES)('$client', ({ unit, integration }) => {
    it('passes its unit suite against a local fake server', async () => {
      const { code, output } = await run(unit, { DOSSIER_BASE_URL: '', DOSSIER_API_KEY: '' });
      if (code !== 0) throw new Error(`exit ${code}\n${output}`);
    });

    it('passes its integration suite against the real gateway and worker', async () => {
      const { code, output } = await run(integration, { DOSSIER_BASE_URL: stack.baseUrl, DOSSIER_API_KEY: '' });
      if (code !== 0) throw new Error(`exit ${code}\n${output}\n${stack.logs.slice(-4000)}`);
    });
  });
});
