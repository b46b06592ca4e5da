/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The nf_tables ruleset generation of the caller's network namespace
 * (NFT_MSG_GETGEN): every committed batch moves it on by one, so two equal
 * readings bracket a span in which nothing was committed.  Plain netlink:
 * the core links no libmnl.
 */
#ifndef SLUICE_NFT_GENID_H
#define SLUICE_NFT_GENID_H

#include <stddef.h>
#include <stdint.h>

/* 0 and the generation in *gen, or -1 with the reason in err. */
int nft_genid_get(uint32_t *gen, char *err, size_t errlen);

#endif
