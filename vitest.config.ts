import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Four projects. `unit`: every suite but the chaos and interop tests, files in parallel.
 * `chaos` (test/chaos): clusters of real broker processes, jobs, proxies and
 * timing assertions (lock expiry, transaction timeouts) — files one at a
 * time, and only after the `unit` group has finished, so that on a small CI
 * machine (2 cores) a chaos file never shares the CPU with another test file.
 * `npx vitest run test/chaos` runs the chaos project alone.
 * `interop` (test/interop): other Kafka tools against kipgen that need Debian
 * packages (kcat, tshark, python3-confluent-kafka): everything in test/interop/
 * and nothing else; a test that needs only Node belongs elsewhere.
 * `kafka` (test/kafka): kipgen's client against Apache Kafka 4.4 itself, one
 * JVM for the whole project (started by its globalSetup; needs Java and
 * Maven), files one at a time.
 * `npm test` runs unit and chaos (Node alone); `npm run test:interop` checks
 * the tools, then runs interop; `npm run test:kafka` checks Java, Maven and
 * Kafka's jars, then runs kafka.
 *
 * Every file runs with its own TMPDIR and fails if it leaves a `kipgen-*`
 * folder behind (test/support/temp-dirs.setup.ts).
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    setupFiles: ['test/support/temp-dirs.setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/chaos/**', 'test/interop/**', 'test/kafka/**'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'chaos',
          include: ['test/chaos/**/*.test.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
          // Bounded waits inside the tests (eventually, waitFor, awaitComplete) decide; this only catches a hang.
          testTimeout: 180_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'interop',
          include: ['test/interop/**/*.test.ts'],
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: {
          name: 'kafka',
          include: ['test/kafka/**/*.test.ts'],
          globalSetup: ['test/kafka/support/global-setup.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 3 },
          testTimeout: 120_000,
        },
      },
    ],
  },
});
