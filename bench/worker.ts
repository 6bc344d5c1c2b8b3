// One participant in its own worker thread (own V8 isolate: own heap, own GC heuristics),
// driven by the harness in the main thread. Started through worker-boot.mjs, which
// registers tsx in this thread. Protocol: the worker posts {type:'ready'|'error'} once,
// then answers each {id, cmd} with {id, ok, value} or {id, ok:false, error}.
import { parentPort, workerData } from 'node:worker_threads';
import type { Participant } from './harness.js';
import { makePlan } from './plan.js';
import { calibrate, slice } from './timing.js';

interface WorkerInput {
  key: string;
  plan: { ours: boolean; oursPath?: string; baseline?: boolean; filter: string | null };
  settleMs: number;
}

const input = workerData as WorkerInput;
const port = parentPort!;

let participant: Participant;
try {
  const plan = makePlan({
    ours: input.plan.ours,
    oursPath: input.plan.oursPath,
    baseline: input.plan.baseline,
    filter: input.plan.filter ? new RegExp(input.plan.filter, 'i') : null,
  });
  const pp = plan.flatMap((c) => c.participants).find((p) => p.key === input.key);
  if (!pp) throw new Error(`no participant ${input.key} in the worker's plan`);
  participant = await pp.make();
  port.postMessage({ type: 'ready', note: participant.note, version: participant.version, async: participant.async });
} catch (e) {
  const err = e as Error;
  port.postMessage({ type: 'error', notApplicable: err?.name === 'NotApplicable', message: String(err?.stack ?? err) });
}

port.on('message', async (m: { id: number; cmd: string; n?: number; ms?: number }) => {
  try {
    let value: unknown;
    switch (m.cmd) {
      case 'check':
        value = await participant.check();
        break;
      case 'calibrate':
        value = await calibrate(participant);
        break;
      case 'slice':
        value = await slice(participant, m.n!, m.ms!, input.settleMs);
        break;
      default:
        throw new Error(`unknown command ${m.cmd}`);
    }
    port.postMessage({ id: m.id, ok: true, value });
  } catch (e) {
    port.postMessage({ id: m.id, ok: false, error: String((e as Error)?.stack ?? e) });
  }
});
