/** Security settings of the broker config: each mistake named. */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../coordinator/config.js';

describe('security config validation', () => {
  const cases: Array<[string, Parameters<typeof resolveConfig>[0], RegExp]> = [
    ['an unknown protocol', { securityProtocol: 'TLS' as never }, /securityProtocol must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL, got "TLS"/],
    [
      'a listener whose name is no protocol and has none',
      { listeners: [{ name: 'INTERNAL', port: 0 }] },
      /listeners\[INTERNAL\]: securityProtocol must be one of/,
    ],
    ['a listener name used twice', { listeners: [{ name: 'PLAINTEXT', port: 0 }] }, /listener name PLAINTEXT is used twice/],
    ['an SSL listener without a certificate', { listeners: [{ name: 'SSL', port: 0 }] }, /needs ssl.key \(or ssl.keyFile\) and ssl.cert/],
    [
      'client authentication without a CA',
      { listeners: [{ name: 'SSL', port: 0 }], ssl: { key: 'k', cert: 'c', clientAuth: 'required' } },
      /ssl.clientAuth needs ssl.ca/,
    ],
    [
      'an unknown mechanism',
      { sasl: { mechanisms: ['GSSAPI' as never] } },
      /sasl.mechanisms: "GSSAPI" is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER/,
    ],
    [
      'a SASL listener without mechanisms',
      { listeners: [{ name: 'SASL_PLAINTEXT', port: 0 }], sasl: { mechanisms: [] } },
      /a SASL listener needs at least one of sasl.mechanisms/,
    ],
    [
      'a secured inter-broker listener in a cluster',
      {
        nodeId: 0,
        port: 9092,
        securityProtocol: 'SASL_PLAINTEXT',
        cluster: [
          { nodeId: 0, host: 'a', port: 9092 },
          { nodeId: 1, host: 'b', port: 9092 },
        ],
      },
      /inter-broker requests.*must be PLAINTEXT/,
    ],
    ['a super user that is no principal', { authorizer: { superUsers: ['admin'] } }, /authorizer.superUsers: "admin" is not a principal like User:admin/],
  ];
  for (const [what, input, message] of cases) {
    it(`refuses ${what}`, () => {
      expect(() => resolveConfig(input)).toThrow(message);
    });
  }

  it('accepts every listener type at once', () => {
    const config = resolveConfig({
      port: 0,
      listeners: [
        { name: 'SSL', port: 0 },
        { name: 'EXTERNAL', port: 0, securityProtocol: 'SASL_SSL' },
      ],
      ssl: { key: 'k', cert: 'c' },
    });
    expect(config.listeners.map((l) => l.name)).toEqual(['SSL', 'EXTERNAL']);
  });
});
