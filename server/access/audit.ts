// The audit log is the server's one change log (server/audit.ts); this name stays for the modules
// that import it from here.
export { createAuditLog, type Actor, type AuditAction, type AuditEntry, type AuditInput, type AuditLog } from '../audit.js';
