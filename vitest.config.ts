import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Two projects. `unit`: every suite but the chaos tests, files in parallel.
 * `chaos` (test/chaos): clusters of real broker processes, jobs, proxies and
 * timing assertions (lock expiry, transaction timeouts) — files one at a
 * time, and only after the `unit` group has finished, so that on a small CI
 * machine (2 cores) a chaos file never shares the CPU with another test file.
 * `npx vitest run test/chaos` runs the chaos project alone.
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/chaos/**'],
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
    ],
  },
});
