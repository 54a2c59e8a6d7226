// The SDK is tested against the real service: startService builds rentapi
// from this repository (or takes RENTAPI_BIN) and starts `rentapi serve`
// on a new SQLite database, and gives its address and sandbox key.

import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

export interface Service {
  baseURL: string;
  key: string;
  bin: string;
  log: string[];
  stop(): void;
}

const repo = resolve(import.meta.dirname, "..", "..", "..", "..");

export async function startService(): Promise<Service> {
  const dir = mkdtempSync(join(tmpdir(), "rentapi-sdk-ts-"));
  let bin = process.env.RENTAPI_BIN ?? "";
  if (bin === "") {
    bin = join(dir, "rentapi");
    execFileSync("go", ["build", "-o", bin, "./cmd/rentapi"], { cwd: repo, stdio: "inherit" });
  }
  const child: ChildProcess = spawn(bin, ["serve", "--addr", "127.0.0.1:0", "--webhook-allow-loopback", "--log-level", "warn"], {
    env: { ...process.env, RENTAPI_DB: "sqlite:" + join(dir, "rentapi.db"), RENTAPI_SECRET_FILE: join(dir, "secret") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log: string[] = [];
  child.stderr?.on("data", (b: Buffer) => log.push(b.toString()));
  let baseURL = "";
  let key = "";
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error("rentapi serve printed no address and key in a minute:\n" + log.join(""))), 60_000);
    child.on("exit", (code) => fail(new Error(`rentapi serve exited ${code}:\n${log.join("")}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      baseURL ||= /listening on (http:\/\/\S+)/.exec(line)?.[1] ?? "";
      key ||= /sandbox test key .*: (svc_test_\S+)/.exec(line)?.[1] ?? "";
      if (baseURL && key) {
        clearTimeout(timer);
        done();
      }
    });
  });
  return {
    baseURL,
    key,
    bin,
    log,
    stop() {
      child.removeAllListeners("exit");
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
