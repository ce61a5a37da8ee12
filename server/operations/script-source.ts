import type { Script } from '../contract/scripts.js';

/** What server/scripts lends operations: a script as it is now, by id (undefined once deleted). */
export interface ScriptSource {
  get(id: number): Pick<Script, 'id' | 'name' | 'runs_on' | 'interpreter' | 'body' | 'sha256' | 'size'> | undefined;
}

/** What a script operation keeps in its `params`: the script by id and name, never its body. */
export interface ScriptParams {
  script_id: number;
  script_name: string;
  timeout_s: number;
}

/** A script that runs on hosts asked for in a guest, or the other way round: in words. */
export const wrongTarget = (script: { name: string }, vmid: number | null) =>
  vmid === null ? `script “${script.name}” runs in guests: name a guest` : `script “${script.name}” runs on the host, not in a guest`;
