/** Types for `dynalite` (v4), which ships none: the options this project uses. */
declare module "dynalite" {
  import type { Server } from "node:http";

  /** Options of the dynalite server. */
  interface DynaliteOptions {
    /** Directory of the LevelDB store; in memory when absent. */
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
  }

  /** Creates (does not start) a DynamoDB-compatible HTTP server. */
  export default function dynalite(options?: DynaliteOptions): Server;
}
