/**
 * An unauthenticated client cannot make the broker hold
 * memory. On a SASL listener a connection may send one ApiVersions, then
 * SaslHandshake, then SaslAuthenticate (Kafka's SaslServerAuthenticator:
 * HANDSHAKE_OR_VERSIONS_REQUEST -> HANDSHAKE_REQUEST -> AUTHENTICATE); a second
 * ApiVersions closes it, however many were pipelined, and whether or not the
 * client reads its answers. Requests are read one at a time before
 * authentication, so a well-behaved pipelined login still works.
 */
import * as net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiVersionsRequest, MetadataRequest, RequestHeader, SaslAuthenticateRequest, SaslHandshakeRequest } from '../../generated/index.js';
import { encodeFrame, type ApiMessageCodec } from '../../runtime/index.js';
import { USERS, startSecureBroker, waitForLog, type SecureBroker } from './support.js';

let secure: SecureBroker;
beforeAll(async () => {
  secure = await startSecureBroker({ sasl: { authenticationTimeoutMs: 30_000 } });
});
afterAll(async () => {
  await secure?.close();
});
const sockets: net.Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
});

function frame(codec: ApiMessageCodec<any>, fields: Record<string, unknown>, version: number, correlationId: number): Buffer {
  const header = RequestHeader.create({ requestApiKey: codec.apiKey, requestApiVersion: version, correlationId, clientId: 'pre-auth-test' });
  return Buffer.from(encodeFrame(RequestHeader, header, codec.headerVersion(version), codec, codec.create(fields), version));
}

/** ApiVersions v3; with `version`, the same bytes claiming another version (as a newer client's would). */
function apiVersions(correlationId: number, version = 3): Buffer {
  const bytes = frame(ApiVersionsRequest, { clientSoftwareName: 'test', clientSoftwareVersion: '1' }, 3, correlationId);
  bytes.writeInt16BE(version, 6);
  return bytes;
}

async function connect(): Promise<net.Socket> {
  const socket = net.connect({ host: '127.0.0.1', port: secure.broker.ports.get('SASL_PLAINTEXT')! });
  sockets.push(socket);
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  return socket;
}

/** Every byte the broker sends until it closes the connection, as the correlation ids of its answers. */
function answersUntilClosed(socket: net.Socket): Promise<number[]> {
  let received = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
  return new Promise((resolve) =>
    socket.once('close', () => {
      const ids: number[] = [];
      for (let at = 0; at + 8 <= received.length; at += 4 + received.readInt32BE(at)) ids.push(received.readInt32BE(at + 4));
      resolve(ids);
    }),
  );
}

const countLines = (pattern: RegExp): number => secure.logs.filter((l) => pattern.test(l)).length;

describe('before authentication, one ApiVersions and then only the SASL exchange', () => {
  it('answers the first of 1,000 pipelined ApiVersions and closes the connection at the second', async () => {
    const socket = await connect();
    const answers = answersUntilClosed(socket);
    socket.write(Buffer.concat(Array.from({ length: 1000 }, (_, i) => apiVersions(i))));
    expect(await answers).toEqual([0]);
    await waitForLog(secure.logs, (l) => /a second ApiVersions before authentication \(one ApiVersions, then SaslHandshake\)/.test(l));
  });

  it('closes three sockets that pipeline ApiVersions and never read', async () => {
    const pattern = /a second ApiVersions before authentication/;
    const before = countLines(pattern);
    const batch = Buffer.concat(Array.from({ length: 20_000 }, (_, i) => apiVersions(i)));
    const idle = await Promise.all(
      [0, 1, 2].map(async () => {
        const socket = await connect();
        socket.pause(); // never reads: the broker's answers would pile up on its side unless it refuses
        socket.write(batch);
        return socket;
      }),
    );
    await waitForLog(secure.logs, () => countLines(pattern) >= before + 3);
    // Reading now shows what the broker did meanwhile: one answer each, then the end of the connection.
    expect(
      await Promise.all(
        idle.map((socket) => {
          const answers = answersUntilClosed(socket);
          socket.resume();
          return answers;
        }),
      ),
    ).toEqual([[0], [0], [0]]);
  });

  it('still lets a client retry an ApiVersions of an unsupported version before the one that counts', async () => {
    const socket = await connect();
    const answers = answersUntilClosed(socket);
    socket.write(Buffer.concat([apiVersions(1, 99), apiVersions(2, 3), apiVersions(3, 3)]));
    expect(await answers).toEqual([1, 2]);
  });

  it('closes a connection that sends anything but SaslHandshake after its ApiVersions', async () => {
    const socket = await connect();
    const answers = answersUntilClosed(socket);
    socket.write(Buffer.concat([apiVersions(1), frame(MetadataRequest, { topics: null }, 12, 2)]));
    expect(await answers).toEqual([1]);
    await waitForLog(secure.logs, (l) => /Metadata before authentication \(SaslHandshake expected after ApiVersions\)/.test(l));
  });

  it('serves a login pipelined in one write, one request at a time, and the request after it', async () => {
    const socket = await connect();
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    socket.write(
      Buffer.concat([
        apiVersions(1),
        frame(SaslHandshakeRequest, { mechanism: 'PLAIN' }, 1, 2),
        frame(SaslAuthenticateRequest, { authBytes: Buffer.from(`\u0000alice\u0000${USERS.alice}`) }, 2, 3),
        frame(MetadataRequest, { topics: null }, 12, 4),
      ]),
    );
    const ids = (): number[] => {
      const out: number[] = [];
      for (let at = 0; at + 8 <= received.length && at + 4 + received.readInt32BE(at) <= received.length; at += 4 + received.readInt32BE(at))
        out.push(received.readInt32BE(at + 4));
      return out;
    };
    for (let i = 0; i < 300 && ids().length < 4; i++) await new Promise((r) => setTimeout(r, 10));
    expect(ids()).toEqual([1, 2, 3, 4]);
    expect(socket.destroyed).toBe(false);
  });
});
