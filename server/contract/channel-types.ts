// The kinds of notification channel: the channels' answers (notifications.ts) and the schema of what a
// client writes (inputs/notifications.ts) both name them, so they stand apart from either.

export const CHANNEL_TYPES = ['webhook', 'ntfy', 'gotify', 'discord', 'email'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
