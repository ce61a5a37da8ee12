import { DeliveryError, type Sender } from './types.js';

export interface EmailConfig {
  host: string;
  port: number;
  secure: boolean;
  user?: string;
  password?: string;
  allow_plaintext_password?: boolean;
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
  ETLS: 'TLS with the SMTP server failed: no STARTTLS, or a certificate that is not trusted',
  EDNS: 'the SMTP server\'s name could not be resolved',
};

/** Node's certificate checks, which nodemailer passes on as `originalCode`. */
const CERTIFICATE_ERRORS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the SMTP server\'s TLS certificate is not trusted (self-signed)',
  SELF_SIGNED_CERT_IN_CHAIN: 'the SMTP server\'s TLS certificate is not trusted (self-signed)',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the SMTP server\'s TLS certificate is not trusted',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the SMTP server\'s TLS certificate is not trusted',
  CERT_HAS_EXPIRED: 'the SMTP server\'s TLS certificate has expired',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the SMTP server\'s TLS certificate does not match its host',
};

/** SMTP through nodemailer; loaded on first use (most servers never send mail). */
export const sendEmail: Sender<EmailConfig> = async (config, n, options) => {
  const { createTransport } = await import('nodemailer');
  // A password is never sent in plain text unless the channel says so: without `secure`, STARTTLS
  // must succeed (with a trusted certificate) before AUTH, or nothing is sent.
  const tlsForPassword = Boolean(config.user && config.password) && !config.secure && config.allow_plaintext_password !== true;
  const transport = createTransport({
    host: config.host,
    port: config.port,
    secure: config.secure,
    requireTLS: tlsForPassword,
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
    const e = err as { code?: string; originalCode?: string; responseCode?: number };
    const text = (e.originalCode && CERTIFICATE_ERRORS[e.originalCode]) || (e.code && SMTP_ERRORS[e.code]) || 'sending the e-mail failed';
    const said = typeof e.responseCode === 'number' ? `${text} (SMTP ${e.responseCode})` : text;
    throw new DeliveryError(e.code === 'ETLS' && tlsForPassword ? `${said}; the password is sent only over TLS (set secure, or allow_plaintext_password to send it without)` : said);
  } finally {
    clearTimeout(timer);
    transport.close();
  }
};
