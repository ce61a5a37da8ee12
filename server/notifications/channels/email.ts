import { DeliveryError, type Sender } from './types.js';

export interface EmailConfig {
  host: string;
  port: number;
  secure: boolean;
  user?: string;
  password?: string;
  from: string;
  to: string;
}

const SMTP_ERRORS: Record<string, string> = {
  EAUTH: 'the SMTP server refused the user name or password',
  ECONNECTION: 'could not connect to the SMTP server',
  ETIMEDOUT: 'the SMTP server did not answer in time',
  ESOCKET: 'the connection to the SMTP server failed',
  EENVELOPE: 'the SMTP server refused the sender or a recipient',
  EMESSAGE: 'the SMTP server refused the message',
  ETLS: 'TLS with the SMTP server failed',
  EDNS: 'the SMTP server\'s name could not be resolved',
};

/** SMTP through nodemailer; loaded on first use (most servers never send mail). */
export const sendEmail: Sender<EmailConfig> = async (config, n, options) => {
  const { createTransport } = await import('nodemailer');
  const transport = createTransport({
    host: config.host,
    port: config.port,
    secure: config.secure,
    auth: config.user ? { user: config.user, pass: config.password ?? '' } : undefined,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
    logger: false,
    debug: false,
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      transport.sendMail({ from: config.from, to: config.to, subject: n.title, text: n.message }),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new DeliveryError(`no answer within ${Math.round(options.timeoutMs / 1000)} s`)), options.timeoutMs);
      }),
    ]);
  } catch (err) {
    if (err instanceof DeliveryError) throw err;
    // nodemailer's own message can quote the server's reply; only its code and the reply's number are kept.
    const e = err as { code?: string; responseCode?: number };
    const text = (e.code && SMTP_ERRORS[e.code]) || 'sending the e-mail failed';
    throw new DeliveryError(typeof e.responseCode === 'number' ? `${text} (SMTP ${e.responseCode})` : text);
  } finally {
    clearTimeout(timer);
    transport.close();
  }
};
