import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { Queue } from 'bullmq';
import { LOOKUP_KINDS } from '@dossier/domain';
import { PROVIDERS } from '@dossier/providers';
import { JOB_NAMES, QUEUE_NAMES, lookupJobOptions, lookupQueueOptions } from '@dossier/contracts';
import { loadCliConfig, loadGatewayConfig, loadWorkerConfig } from '@dossier/config';
import { redisOptionsFromUrl } from '@dossier/runtime';
import {
  K8S_DIR,
  REPO_ROOT,
  appOf,
  envNamesOf,
  readKustomization,
  readManifests,
  testEnv,
  uniquePrefix,
  type K8sObject,
} from '@dossier/testing';

/**
 * deploy/k8s/, with no cluster to apply it to: every manifest parsed, and checked against the code —
 * one image, the commands the build produces, variables the apps read (and that their config accepts),
 * probes on the ports the apps listen on, grace periods, and KEDA's list keys against BullMQ's own.
 */

interface Container {
  name: string;
  image: string;
  command?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  envFrom?: ({ configMapRef?: { name: string }; secretRef?: { name: string } } & { optional?: boolean })[];
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  startupProbe?: {
    httpGet?: { path: string; port: string | number };
    periodSeconds?: number;
    failureThreshold?: number;
  };
  lifecycle?: { preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } } };
}
interface PodSpec {
  containers: Container[];
  terminationGracePeriodSeconds?: number;
}

const manifests = readManifests();
const objects = manifests.map((m) => m.object);
const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);
const byName = (kind: string, name: string): K8sObject => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in deploy/k8s`);
  return found;
};
const podOf = (o: K8sObject): PodSpec => (o.spec as { template: { spec: PodSpec } }).template.spec;
const workloads = [...ofKind('Deployment'), ...ofKind('Job')];
interface KedaTrigger {
  type: string;
  metadata: Record<string, string>;
  authenticationRef?: { name: string };
}

/** The environment a container gets: its envFrom ConfigMaps and Secrets (example values), then its env. */
function envOf(container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const source = from.configMapRef
      ? byName('ConfigMap', from.configMapRef.name).data
      : byName('Secret', from.secretRef!.name).stringData;
    Object.assign(env, source);
  }
  for (const e of container.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

const single = (o: K8sObject): Container => {
  const { containers } = podOf(o);
  expect(containers).toHaveLength(1);
  return containers[0]!;
};
const portOf = (c: Container, port: string | number): number | undefined =>
  typeof port === 'number' ? port : c.ports?.find((p) => p.name === port)?.containerPort;
const deploymentOfKind = (kind: string) =>
  ofKind('Deployment').find((d) => {
    const c = single(d);
    return appOf(c.command) === 'worker' && envOf(c)['LOOKUP_QUEUES'] === kind;
  });

describe('deploy/k8s manifests', () => {
  it('lists every manifest in kustomization.yaml, and each parses', () => {
    const files = readdirSync(K8S_DIR).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml');
    expect(readKustomization().resources.sort()).toEqual(files.sort());
    expect(objects.every((o) => typeof o.kind === 'string' && typeof o.metadata?.name === 'string')).toBe(true);
  });

  it('runs one image everywhere, the one kustomization.yaml names, with commands the build produces', () => {
    const images = new Set(workloads.flatMap((w) => podOf(w).containers.map((c) => c.image)));
    expect([...images]).toEqual(['dossier']);
    expect(readKustomization().images?.map((i) => i.name)).toEqual(['dossier']);
    for (const w of workloads) {
      const command = single(w).command;
      expect({ w: w.metadata.name, app: appOf(command) }).not.toMatchObject({ app: null });
      expect({ w: w.metadata.name, built: existsSync(join(REPO_ROOT, command![1]!)) }).toEqual({
        w: w.metadata.name,
        built: true,
      });
    }
  });

  it('sets only variables the apps read, with values their config accepts', () => {
    for (const w of workloads) {
      const c = single(w);
      const app = appOf(c.command)!;
      const env = envOf(c);
      const known = envNamesOf(app);
      expect({ w: w.metadata.name, unknown: Object.keys(env).filter((k) => !known.has(k)) }).toEqual({
        w: w.metadata.name,
        unknown: [],
      });
      const load = { gateway: loadGatewayConfig, worker: loadWorkerConfig, cli: loadCliConfig }[app];
      expect(() => load(env)).not.toThrow();
    }
  });

  it('has the migrate Job and a gateway Deployment with a Service on its API port, not on its metrics port', () => {
    const migrate = single(byName('Job', 'dossier-migrate'));
    expect(migrate.command).toEqual(['node', 'dist/apps/cli/src/main.js', 'db:migrate']);
    const gateway = byName('Deployment', 'dossier-gateway');
    const c = single(gateway);
    expect(appOf(c.command)).toBe('gateway');
    const env = envOf(c);
    const config = loadGatewayConfig(env);
    const metricsPort = Number(env['METRICS_PORT']);
    expect(metricsPort).toBeGreaterThan(0);
    expect(metricsPort).not.toBe(config.port);
    const service = byName('Service', 'dossier-gateway');
    const targets = (service.spec as { ports: { targetPort: string | number }[] }).ports.map((p) =>
      portOf(c, p.targetPort),
    );
    expect(targets).toEqual([config.port]);
    expect(ofKind('Service')).toHaveLength(1); // no Service for the metrics or the workers' health ports
  });

  it('probes the gateway and every worker on the port and paths the app listens on', () => {
    for (const d of ofKind('Deployment')) {
      const c = single(d);
      const env = envOf(c);
      const port = appOf(c.command) === 'gateway' ? loadGatewayConfig(env).port : loadWorkerConfig(env).healthPort;
      expect({ d: d.metadata.name, port }).not.toMatchObject({ port: null });
      const probes = { ready: c.readinessProbe?.httpGet, live: c.livenessProbe?.httpGet };
      expect({
        d: d.metadata.name,
        ready: probes.ready && { path: probes.ready.path, port: portOf(c, probes.ready.port) },
        live: probes.live && { path: probes.live.path, port: portOf(c, probes.live.port) },
      }).toEqual({ d: d.metadata.name, ready: { path: '/health/ready', port }, live: { path: '/health/live', port } });
    }
  });

  it('gives the gateway, which listens only once Redis and Postgres answer, minutes to start before liveness counts', () => {
    const c = single(byName('Deployment', 'dossier-gateway'));
    const startup = c.startupProbe;
    expect(startup?.httpGet && { path: startup.httpGet.path, port: portOf(c, startup.httpGet.port) }).toEqual({
      path: '/health/live',
      port: loadGatewayConfig(envOf(c)).port,
    });
    // Kubernetes' defaults: every 10 s, 3 failures.
    expect((startup!.periodSeconds ?? 10) * (startup!.failureThreshold ?? 3)).toBeGreaterThanOrEqual(300);
  });

  it('gives the gateway longer than its preStop pause and the longest synchronous wait to stop, and workers their shutdown grace', () => {
    const gateway = byName('Deployment', 'dossier-gateway');
    const c = single(gateway);
    const pause = Number(c.lifecycle?.preStop?.exec?.command[1] ?? c.lifecycle?.preStop?.sleep?.seconds ?? 0);
    const syncWaitMaxS = loadGatewayConfig(envOf(c)).syncWaitMaxS;
    expect(podOf(gateway).terminationGracePeriodSeconds).toBeGreaterThan(pause + syncWaitMaxS);
    for (const kind of LOOKUP_KINDS) {
      const d = deploymentOfKind(kind)!;
      const grace = loadWorkerConfig(envOf(single(d))).shutdownGraceMs / 1000;
      expect({ kind, grace: podOf(d).terminationGracePeriodSeconds }).toEqual({ kind, grace: expect.any(Number) });
      expect(podOf(d).terminationGracePeriodSeconds).toBeGreaterThan(grace);
    }
  });

  it("gives each worker Deployment the keys of its kind's licensed providers, in the example providers Secret", () => {
    const licensed = PROVIDERS.filter((p) => p.transport === 'http' && p.isConfigured({}) !== true);
    expect(licensed.length).toBeGreaterThan(0);
    for (const provider of licensed) {
      for (const kind of provider.kinds) {
        // Every variable the Deployment gets, filled in as an operator fills the example Secret's values.
        const env = Object.fromEntries(Object.keys(envOf(single(deploymentOfKind(kind)!))).map((k) => [k, 'set']));
        expect({ provider: provider.id, kind, on: provider.isConfigured(env) }).toEqual({
          provider: provider.id,
          kind,
          on: true,
        });
      }
    }
  });

  it("has one worker Deployment per lookup kind, each scaled by KEDA on its own queue's waiting list", () => {
    const scaled = ofKind('ScaledObject');
    expect(scaled).toHaveLength(LOOKUP_KINDS.length);
    const redisHost = new URL(byName('Secret', 'dossier-connections').stringData!['REDIS_URL']!).host;
    for (const kind of LOOKUP_KINDS) {
      const d = deploymentOfKind(kind);
      expect({ kind, deployment: d?.metadata.name }).toEqual({ kind, deployment: expect.any(String) });
      const env = envOf(single(d!));
      expect(loadWorkerConfig(env).kinds).toEqual([kind]);
      const so = scaled.find(
        (s) => (s.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name === d!.metadata.name,
      );
      const triggers = (so?.spec as { triggers: KedaTrigger[] }).triggers;
      expect(triggers).toEqual([
        expect.objectContaining({
          type: 'redis',
          metadata: expect.objectContaining({
            address: redisHost,
            listName: `${env['QUEUE_PREFIX']}:${QUEUE_NAMES[kind]}:wait`,
          }),
        }),
      ]);
    }
  });
  it("connects KEDA's scalers to Redis as REDIS_URL does: its user, password, database and TLS", () => {
    const url = byName('Secret', 'dossier-connections').stringData!['REDIS_URL']!;
    const apps = redisOptionsFromUrl(url);
    for (const so of ofKind('ScaledObject')) {
      const triggers = (so.spec as { triggers: KedaTrigger[] }).triggers;
      for (const trigger of triggers) {
        const auth = byName('TriggerAuthentication', trigger.authenticationRef!.name);
        const refs = (auth.spec as { secretTargetRef: { parameter: string; name: string; key: string }[] })
          .secretTargetRef;
        // Every connection setting stated, so that an operator who edits REDIS_URL finds each one to change.
        expect({ so: so.metadata.name, params: refs.map((r) => r.parameter).sort() }).toEqual({
          so: so.metadata.name,
          params: ['password', 'username'],
        });
        expect({ so: so.metadata.name, metadata: Object.keys(trigger.metadata) }).toEqual({
          so: so.metadata.name,
          metadata: expect.arrayContaining(['databaseIndex', 'enableTLS']),
        });
        const param = Object.fromEntries(
          refs.map((r) => [r.parameter, byName('Secret', r.name).stringData?.[r.key]] as const),
        );
        // What KEDA's redis scaler connects with (keda.sh/docs/2.15/scalers/redis-lists): defaults '' , 0, false.
        const keda = {
          so: so.metadata.name,
          username: param['username'] ?? '',
          password: param['password'] ?? '',
          db: Number(trigger.metadata['databaseIndex'] ?? '0'),
          tls: trigger.metadata['enableTLS'] === 'true' || param['tls'] === 'enable',
        };
        expect(keda).toEqual({
          so: so.metadata.name,
          username: apps.username ?? '',
          password: apps.password ?? '',
          db: apps.db,
          tls: apps.tls !== undefined,
        });
      }
    }
  });
});

describe("KEDA's list key against BullMQ", () => {
  const prefix = uniquePrefix('keda');
  // Opened in beforeAll, not here: Jest skips both hooks when a `-t` filter leaves none of the block's
  // tests, so a connection opened at describe time would stay open and Jest would never exit.
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(redisOptionsFromUrl(testEnv.redisUrl));
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('finds a lookup job added with the default options in `<prefix>:<queue>:wait` (a list)', async () => {
    for (const kind of LOOKUP_KINDS) {
      const queue = new Queue(QUEUE_NAMES[kind], lookupQueueOptions(prefix, redisOptionsFromUrl(testEnv.redisUrl)));
      try {
        await queue.add(JOB_NAMES[kind], { kind }, { ...lookupJobOptions(), jobId: `keda-${kind}` });
        const key = `${prefix}:${QUEUE_NAMES[kind]}:wait`;
        expect({ kind, type: await redis.type(key), length: await redis.llen(key) }).toEqual({
          kind,
          type: 'list',
          length: 1,
        });
        expect(await redis.exists(`${prefix}:${QUEUE_NAMES[kind]}:prioritized`)).toBe(0);
      } finally {
        await queue.close();
      }
    }
  });
});
