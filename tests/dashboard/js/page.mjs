// The page's modules (static/dashboard/*.js) loaded in Node as the browser loads them: from a copy
// of the folder marked as ES modules, so their relative imports resolve. The copy is made once per
// test process and removed when it exits.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

let folder = null;

export async function pageModule(name) {
  if (!folder) {
    folder = mkdtempSync(join(tmpdir(), "kk-page-"));
    process.on("exit", () => rmSync(folder, { recursive: true, force: true }));
    cpSync(fileURLToPath(new URL("../../../static/dashboard/", import.meta.url)), folder, { recursive: true });
    writeFileSync(join(folder, "package.json"), '{"type": "module"}\n');
  }
  return import(pathToFileURL(join(folder, name)).href);
}
