/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CRC32C (Castagnoli, polynomial 0x1edc6f41 reflected), as in iSCSI and
 * ext4: the check of a disk spool record (spool.h).  Reentrant.
 */
#ifndef SLUICE_CRC32C_H
#define SLUICE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC32C of buf, continuing from crc (start with 0). */
uint32_t sl_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
