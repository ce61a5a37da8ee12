import instances from './0001-instances.sql';
import usage from './0004-usage.sql';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * Every schema change, in order. Never edit a released migration: add the next number.
 * Each feature owns its tables; the numbers only say the order they were introduced.
 */
export const migrations: readonly Migration[] = [
  { version: 1, name: 'instances', sql: instances },
  { version: 4, name: 'usage', sql: usage },
];
