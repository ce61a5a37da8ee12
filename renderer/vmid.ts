/**
 * Proxmox's guest ids: what clone (and later deploy) accepts. The registry takes any whole number
 * above 0, so forms that make guests say this range, and the instance form warns outside it.
 */
export const PROXMOX_VMID = { min: 100, max: 999_999_999 } as const;
export const VMID_RANGE_TEXT = '100 to 999,999,999';
export const isProxmoxVmid = (vmid: number): boolean => Number.isInteger(vmid) && vmid >= PROXMOX_VMID.min && vmid <= PROXMOX_VMID.max;
