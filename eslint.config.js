// The lint rules that catch what hurts in this code base: an `any` that lets a
// renamed schema field compile, a promise nobody awaits (a lost error or a
// write racing the reply), and dead variables. Formatting is Prettier's job
// (`npm run lint` runs both).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['generated/**', 'dist/**', 'packages/*/dist/**', 'node_modules/**', '**/node_modules/**', 'test/kafka/target/**', 'message-schemas/**'],
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: { allowDefaultProject: ['vitest.config.ts'] }, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // An \`any\` in product code hides a schema change from the compiler. Tests read
    // decoded responses loosely on purpose and are left to the type checker.
    files: [
      'runtime/**/*.ts',
      'connection/**/*.ts',
      'generator/**/*.ts',
      'client/**/*.ts',
      'coordinator/**/*.ts',
      'chaos/**/*.ts',
      'bench/**/*.ts',
      'examples/**/*.ts',
    ],
    rules: { '@typescript-eslint/no-explicit-any': 'error' },
  },
);
