// PRODUCT.md's roles and capability table are part of the wire (the dashboard offers what a role
// may do), so they are written once, in server/contract.
export { ROLE_TABLE, ROLES, roleHas, type Role } from '../contract/access.js';
