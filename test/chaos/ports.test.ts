// Brokers restarted by the chaos tests keep their port: it must not be one the
// kernel may hand to an outgoing connection meanwhile (a CI run once failed so).
import * as fs from 'node:fs';
import * as net from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePorts } from '../../chaos/harness.js';

describe('freePorts', () => {
  it('gives distinct ports outside the ephemeral range, free to listen on', async () => {
    const ports = await freePorts(8);
    expect(new Set(ports).size).toBe(8);
    const range = fs.existsSync('/proc/sys/net/ipv4/ip_local_port_range')
      ? fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number)
      : null;
    if (range !== null) for (const port of ports) expect(port < range[0]! || port > range[1]!, `port ${port} in ${range.join('–')}`).toBe(true);
    for (const port of ports) {
      const server = net.createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      await new Promise((r) => server.close(r));
    }
  });
});
