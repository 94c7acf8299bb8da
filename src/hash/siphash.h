/*-------------------------------------------------------------------------
 *
 * src/hash/siphash.h
 *		SipHash-1-3, the function every row hash folds its words with, and
 *		the database's keys it runs under.
 *
 * The steps are inline: a row's hash is a few dozen of them, and a call for
 * each would cost more than the step itself.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_SIPHASH_H
#define BACKFILL_SIPHASH_H

#include "postgres.h"

/* The state of SipHash. */
typedef struct BackfillSipState
{
	uint64		v0;
	uint64		v1;
	uint64		v2;
	uint64		v3;
	uint64		pend;			/* small values not folded yet, */
	int			pendlen;		/* and how many bytes they take */
} BackfillSipState;

/* Marks the length of a byte string, or of a value made of words, in the words folded. */
#define BACKFILL_LEN_MARK	UINT64CONST(0xa4093822299f31d0)

/* Rotate left by r bits, 0 < r < 64. */
static inline uint64
SipRotl64(uint64 x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* SipHash's round. */
static pg_attribute_always_inline void
SipRound(BackfillSipState *s)
{
	s->v0 += s->v1;
	s->v1 = SipRotl64(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = SipRotl64(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = SipRotl64(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = SipRotl64(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = SipRotl64(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = SipRotl64(s->v2, 32);
}

/* SipHash's initial state for the key (k0, k1). */
static inline void
SipInit(BackfillSipState *s, uint64 k0, uint64 k1)
{
	s->v0 = k0 ^ UINT64CONST(0x736f6d6570736575);
	s->v1 = k1 ^ UINT64CONST(0x646f72616e646f6d);
	s->v2 = k0 ^ UINT64CONST(0x6c7967656e657261);
	s->v3 = k1 ^ UINT64CONST(0x7465646279746573);
	s->pend = 0;
	s->pendlen = 0;
}

/* SipHash-1-3's compression of one 8-byte block. */
static pg_attribute_always_inline void
SipAbsorb(BackfillSipState *s, uint64 word)
{
	s->v3 ^= word;
	SipRound(s);
	s->v0 ^= word;
}

/*
 * Fold the bytes of small values (4 bytes or less) gathered into one word,
 * if there are any.
 */
static pg_attribute_always_inline void
SipFlushSmall(BackfillSipState *s)
{
	if (s->pendlen != 0)
	{
		SipAbsorb(s, s->pend);
		s->pend = 0;
		s->pendlen = 0;
	}
}

/* Fold one word into the state, after any small values gathered before it. */
static pg_attribute_always_inline void
SipStep(BackfillSipState *s, uint64 word)
{
	SipFlushSmall(s);
	SipAbsorb(s, word);
}

/*
 * Fold a value of len <= 4 bytes: consecutive small values share a word, as
 * many as fit (two int4s, a date and an int4, eight booleans).  Which values
 * share a word follows from the types alone, so the words still determine
 * the values.
 */
static pg_attribute_always_inline void
SipStepSmall(BackfillSipState *s, uint64 value, int len)
{
	if (s->pendlen + len > 8)
		SipFlushSmall(s);
	s->pend |= value << (s->pendlen * 8);
	s->pendlen += len;
}

/* SipHash's finalization, after d rounds. */
static pg_attribute_always_inline uint64
SipFinish(BackfillSipState *s, int d)
{
	SipFlushSmall(s);
	s->v2 ^= 0xff;
	for (int i = 0; i < d; i++)
		SipRound(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/*
 * Fold a byte string into the state.  Up to 7 bytes go in one word: the
 * bytes, zero-padded, with the length in the top byte.  Longer strings give
 * their length, then their 8-byte words, the last 1-7 bytes read as at most
 * two overlapping words.  Either way, given the length the words determine
 * the bytes, and no byte is read alone in a loop (which would stall on store
 * forwarding).
 */
static pg_attribute_always_inline void
SipStepBytes(BackfillSipState *s, const unsigned char *p, size_t len)
{
	uint64		v;

	if (len < 8)
	{
		if (len >= 4)
		{
			uint32		lo;
			uint32		hi;

			memcpy(&lo, p, 4);
			memcpy(&hi, p + len - 4, 4);
			/* the bytes both reads cover are the same, so OR keeps them */
			v = lo | ((uint64) hi << ((len - 4) * 8));
		}
		else if (len > 0)
			v = (uint64) p[0] | ((uint64) p[len >> 1] << ((len >> 1) * 8)) |
				((uint64) p[len - 1] << ((len - 1) * 8));
		else
			v = 0;
		SipStep(s, v | ((uint64) len << 56));
		return;
	}

	SipStep(s, (uint64) len ^ BACKFILL_LEN_MARK);
	while (len >= 8)
	{
		memcpy(&v, p, 8);
		SipStep(s, v);
		p += 8;
		len -= 8;
	}
	if (len >= 4)
	{
		uint32		lo;
		uint32		hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + len - 4, 4);
		SipStep(s, ((uint64) hi << 32) | lo);
	}
	else if (len > 0)
		SipStep(s, ((uint64) p[0] << 16) | ((uint64) p[len >> 1] << 8) | p[len - 1]);
}

extern void BackfillRowHashKey(uint64 *k0, uint64 *k1);
extern void BackfillSealSums(uint64 rows, uint64 sum1, uint64 sum2, uint64 sealed[2]);
extern char *BackfillKeyCheck(void);

#endif							/* BACKFILL_SIPHASH_H */
