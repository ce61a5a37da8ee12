import type { AgentCommand } from '../contract/hosts.js';
import type { Task, Tasks } from '../tasks.js';

export interface CommandChannelOptions {
  /** Open polls per host (2): a further one answers the oldest with nothing, so an agent whose old connection died unseen is not locked out. */
  maxPerHost?: number;
  /** Open polls in all (10 000): beyond it a poll is answered at once with nothing. */
  maxPolls?: number;
  /** How often waiting polls are checked for their deadline (1 000 ms): one task for all of them. */
  tickMs?: number;
}

interface Poll {
  hostId: number;
  deadline: number;
  take: () => AgentCommand[];
  answer: (commands: AgentCommand[]) => void;
}

export type CommandChannel = ReturnType<typeof createCommandChannel>;

/**
 * The long-poll behind GET /api/agent/commands ("delivery within 2 s"): a poll that finds nothing due
 * waits; a command made for its host wakes it once that command has committed (`notify`), and it
 * takes what is due in its own transaction, so a command is handed to one request only. Waiting
 * costs a small object per poll: one task (`hosts.command-polls`), there only while polls wait, ends those past their time.
 */
export function createCommandChannel(tasks: Pick<Tasks, 'every'>, options: CommandChannelOptions = {}) {
  // A poll waits in real time, whatever clock the app keeps (tests move theirs by hand).
  const now = () => performance.now();
  const maxPerHost = options.maxPerHost ?? 2;
  const maxPolls = options.maxPolls ?? 10_000;
  const tickMs = options.tickMs ?? 1_000;
  const byHost = new Map<number, Set<Poll>>();
  let open = 0;
  let ticker: Task | undefined;
  let closed = false;

  function end(poll: Poll, commands: AgentCommand[]): void {
    const set = byHost.get(poll.hostId);
    if (!set?.delete(poll)) return;
    open--;
    if (set.size === 0) byHost.delete(poll.hostId);
    if (open === 0) stopTimer();
    poll.answer(commands);
  }

  function tick(): void {
    const t = now();
    for (const set of [...byHost.values()]) for (const poll of [...set]) if (poll.deadline <= t) end(poll, []);
  }

  const stopTimer = () => {
    ticker?.cancel();
    ticker = undefined;
  };

  return {
    /**
     * Answers with what `take` hands out now, or waits up to `waitMs` for a command; [] when none
     * came. `onGone` (the caller's) lets the poll go when its connection closes first.
     */
    wait(hostId: number, waitMs: number, take: () => AgentCommand[], onGone: (cancel: () => void) => void): Promise<AgentCommand[]> {
      const commands = take();
      if (commands.length || waitMs <= 0 || closed || open >= maxPolls) return Promise.resolve(commands);
      return new Promise((resolve) => {
        const poll: Poll = { hostId, deadline: now() + waitMs, take, answer: resolve };
        let set = byHost.get(hostId);
        if (!set) byHost.set(hostId, (set = new Set()));
        if (set.size >= maxPerHost) end(set.values().next().value!, []);
        set.add(poll);
        open++;
        ticker ??= tasks.every('hosts.command-polls', tickMs, tick);
        onGone(() => end(poll, []));
      });
    },

    /** A command for this host has committed: the host's oldest waiting poll that finds it takes it. */
    notify(hostId: number): void {
      for (const poll of [...(byHost.get(hostId) ?? [])]) {
        const commands = poll.take();
        if (commands.length) return end(poll, commands);
      }
    },

    /** Open polls (for tests and the benchmark). */
    size: () => open,

    /** Server shutdown: every waiting poll is answered with nothing at once, and none waits from now on. */
    close(): void {
      closed = true;
      for (const set of [...byHost.values()]) for (const poll of [...set]) end(poll, []);
      stopTimer();
    },
  };
}
