// Types for packages/build.mjs, a plain Node script that tests and benchmarks also import.
export declare const PACKAGES: Record<string, { name: string; folders: string[] }>;
export declare function assemble(): void;
export declare function bundleBrokerCli(compiledRoot: string, outFile: string): void;
export declare function folderBytes(dir: string): number;
export declare function statusLine(stream?: { isTTY?: boolean; write(text: string): unknown }): (text: string) => void;
