/* global process */
// Loaded into the app by bench/parked-runs.js (`node --import`): on SIGUSR2 it writes the main
// thread's process.memoryUsage() as JSON to MEMORY_PROBE_FILE. Nothing else: the app runs as
// it ships. (RSS covers every thread; heapUsed and external are the main thread's.)
import { writeFileSync } from "node:fs";

process.on("SIGUSR2", () => {
  writeFileSync(process.env.MEMORY_PROBE_FILE, JSON.stringify(process.memoryUsage()));
});
