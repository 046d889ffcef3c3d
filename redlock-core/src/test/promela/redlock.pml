/*
 * Redlock with forgetful nodes: an exhaustive model of the guards of dev.redlock.core
 * (ClockConsensus, ClockReadings, NodeJudge, MarkerWatch, NodeProbe, NodeGreeting,
 * Evidence, CounterReseed). docs/model.md describes it; its configurations, guards,
 * assumptions and windows are the macros below.
 *
 * Five nodes, quorum 3, at most F = 2 faulty. Client A takes the lock on a bare quorum
 * (its SET reaches nodes 0, 1 and 2 only: the worst case), then holds a valid lease
 * until the step "A's lease ends". Client B, started at any point with no memory,
 * probes, greets and tries the same resource. Faults hit the faulty nodes at any point.
 * (a) B never wins while A's lease is valid, unless a documented window excuses it.
 * (b) With FENCING, a token B gets after A's lease exceeds A's.
 *
 * Time is abstract. Clocks are offsets (node clock minus true time) in units of b/2,
 * b being the clock tolerance; honest offsets stay within one unit of true time. A
 * lease's drift allowance is DRIFT = 3b: a key of a valid lease is gone from a node iff
 * the node's offset rose by more than DRIFT since the key was set (dropped at once:
 * more behaviours than Redis, never fewer). BIG stands for a step beyond the restart
 * quarantine Q and every TTL. A "tick" is a probe period P passing: a marker written
 * before the last tick is due for a heartbeat, and every running client probes at
 * least once between ticks. A quarantine taken once A's round started outlasts A's
 * lease (TTL <= Q); one taken before, or shortened, may lapse at any point.
 */

#define N 5
#define QU 3
#define F 2
#define A 0
#define B 1

/*
 * ---------- configurations (spin -D...) ----------
 * The small one, for CI, in three parts:
 *   CLOCK (the default)  clock faults: steps of +1b, +BIG, -BIG and corrections
 *   DATA                 flushes, DEBUG RELOADs and restored snapshots
 *   FENCE                DATA with fencing tokens, after A's lease too
 * FULL: every fault at once, more of them, finer timing (-DFENCING=1 adds tokens).
 * Any parameter may be set on its own as well (-DTICKS=3).
 */
#if defined(FULL)
#define P_FAULTS 3        /* fault events per faulty node */
#define P_CLOCK 1         /* clock faults */
#define P_DATA 1          /* flushes, reloads, restores */
#define P_FENCING 0
#define P_TICKS 3         /* probe periods that may pass */
#define P_CF_ENDS 3       /* marker quarantines that time may end (each a Q passing) */
#define P_B_ROUNDS 2      /* B's acquisition attempts */
#define P_WMAX 1          /* a round's reading is [off - wl, off + wh], wl, wh <= WMAX */
#define P_PATTERNS 1      /* every pattern of honest offsets (else one) */
#define P_HONEST_ZERO 1   /* honest offsets -1, 0, 1 (else -1, 1) */
#define P_BOTH_SETS 1     /* a faulty node outside A's quorum too (else nodes 0, 1) */
#define P_DRIFTS 1        /* honest clocks may move within their band this often */
#define P_SPLIT 1         /* A's and B's nodes run and are read one by one, the world
                             going on between; B's replies read later than run */
#define P_END_ANY_TIME 1  /* a round may end at its deadline with any replies read */
#define P_EARLY_DATA 1    /* flushes and rollbacks also before A's round */
#define P_B_PROBES 1      /* B probes (else only its greetings inspect) */
#define P_B_START_ANY 1   /* B starts at any point (else at once, or when it tries) */
#define P_FINE_STEPS 1    /* steps of b/2, b, 2b, 3b, 3.5b, BIG; back by b, 2b, 3.5b, BIG */
#elif defined(DATA) || defined(FENCE)
#ifdef FENCE
#define P_FAULTS 1
#else
#define P_FAULTS 2
#endif
#define P_CLOCK 0
#define P_DATA 1
#ifdef FENCE
#define P_FENCING 1
#define P_CF_ENDS 1
#else
#define P_FENCING 0
#define P_CF_ENDS 0
#endif
#define P_TICKS 1
#define P_B_ROUNDS 1
#define P_WMAX 0
#define P_PATTERNS 0
#define P_HONEST_ZERO 0
#define P_BOTH_SETS 0
#define P_DRIFTS 0
#define P_SPLIT 0
#define P_END_ANY_TIME 0
#define P_EARLY_DATA 0
#define P_B_PROBES 0
#define P_B_START_ANY 0
#define P_FINE_STEPS 0
#else
#define P_FAULTS 2
#define P_CLOCK 1
#define P_DATA 0
#define P_FENCING 0
#define P_TICKS 0
#define P_CF_ENDS 0
#define P_B_ROUNDS 1
#define P_WMAX 0
#define P_PATTERNS 1
#define P_HONEST_ZERO 0
#define P_BOTH_SETS 1
#define P_DRIFTS 0
#define P_SPLIT 0
#define P_END_ANY_TIME 0
#define P_EARLY_DATA 0
#define P_B_PROBES 0
#define P_B_START_ANY 0
#define P_FINE_STEPS 0
#endif

#ifndef FAULTS
#define FAULTS P_FAULTS
#endif
#ifndef CLOCK_FAULTS
#define CLOCK_FAULTS P_CLOCK
#endif
#ifndef RELOAD_FAULTS
#define RELOAD_FAULTS P_DATA
#endif
#ifndef RESTORE_FAULTS
#define RESTORE_FAULTS P_DATA
#endif
#ifndef FLUSH_FAULTS
#define FLUSH_FAULTS P_DATA
#endif
#ifndef FENCING
#define FENCING P_FENCING
#endif
#ifndef TICKS
#define TICKS P_TICKS
#endif
#ifndef CF_ENDS
#define CF_ENDS P_CF_ENDS
#endif
#ifndef B_ROUNDS
#define B_ROUNDS P_B_ROUNDS
#endif
#ifndef WMAX
#define WMAX P_WMAX
#endif
#ifndef PATTERNS
#define PATTERNS P_PATTERNS
#endif
#ifndef HONEST_ZERO
#define HONEST_ZERO P_HONEST_ZERO
#endif
#ifndef BOTH_SETS
#define BOTH_SETS P_BOTH_SETS
#endif
#ifndef DRIFTS
#define DRIFTS P_DRIFTS
#endif
#ifndef A_SPLIT
#define A_SPLIT P_SPLIT
#endif
#ifndef B_SPLIT
#define B_SPLIT P_SPLIT
#endif
#ifndef SPLIT_READS
#define SPLIT_READS P_SPLIT
#endif
#ifndef END_ANY_TIME
#define END_ANY_TIME P_END_ANY_TIME
#endif
#ifndef EARLY_DATA_FAULTS
#define EARLY_DATA_FAULTS P_EARLY_DATA
#endif
#ifndef B_PROBES
#define B_PROBES P_B_PROBES
#endif
#ifndef B_START_ANY
#define B_START_ANY P_B_START_ANY
#endif
#ifndef FINE_STEPS
#define FINE_STEPS P_FINE_STEPS
#endif
#ifndef PROBE_EVERY_PERIOD
#define PROBE_EVERY_PERIOD B_PROBES /* a period passes only once each running client probed */
#endif
#ifndef ONE_FAULTY
#define ONE_FAULTY 0      /* node 0 alone is faulty (to show a finding quickly) */
#endif

/* ---------- the guards: 1 as the code has them; -DGUARD_X=0 removes one ---------- */
#ifndef GUARD_CONSENSUS
#define GUARD_CONSENSUS 1     /* ClockConsensus: a grant counts only from a cleared clock */
#endif
#ifndef GUARD_ALLOWANCE
#define GUARD_ALLOWANCE 1     /* RedlockSettings.driftNanosFor adds 3b to every lease */
#endif
#ifndef GUARD_PENDING
#define GUARD_PENDING 1       /* an undecided clock's grant is pending, not counted */
#endif
#ifndef GUARD_GONE
#define GUARD_GONE 1          /* a node whose marker is gone counts in no round */
#endif
#ifndef GUARD_EPOCH
#define GUARD_EPOCH 1         /* an epoch below the remembered one: ROLLBACK */
#endif
#ifndef GUARD_HEARTBEAT
#define GUARD_HEARTBEAT 1     /* an inspection raises an epoch older than a probe period */
#endif
#ifndef GUARD_EVIDENCE
#define GUARD_EVIDENCE 1      /* Evidence.compare: FLUSH* or DEBUG calls since the marker */
#endif
#ifndef GUARD_COUNTSFROM
#define GUARD_COUNTSFROM 1    /* a marker's countsFrom ahead quarantines the node */
#endif
#ifndef GUARD_RECORD
#define GUARD_RECORD 1        /* a cause found is written in the marker for every client */
#endif
#ifndef GUARD_CONFIRMED
#define GUARD_CONFIRMED 1     /* NodeJudge.confirmedCounter (fencing) */
#endif
#ifndef GUARD_CONFIRM_ROUND
#define GUARD_CONFIRM_ROUND 1 /* a token stands once a quorum confirmed it (fencing) */
#endif
#ifndef GUARD_RESEED_QUORUM
#define GUARD_RESEED_QUORUM 1 /* re-seeding reads N - quorum + 1 other nodes (fencing) */
#endif
#ifndef GUARD_RESEED_OK
#define GUARD_RESEED_OK 1     /* and only nodes whose own counters are ok (fencing) */
#endif

/* ---------- assumptions (1: assumed; 0: the environment may break them) ---------- */
#ifndef ASSUME_PROBED_STATES
/* a faulty clock keeps each value for a probe period, so A's probe reads it before it
   changes again (NodeProbe: a step and back is seen by a client that reads between) */
#define ASSUME_PROBED_STATES 1
#endif
#ifndef ASSUME_NO_LAUNDERING
/* a FINDING, not a documented window: after a snapshot is restored, a client that
   remembers no epoch above the restored one (a new client, one whose memory is older
   than the snapshot) sees nothing, and its greeting or probe writes a heartbeat, which
   raises the epoch above the one A remembers: A's next probe then sees nothing either,
   and every client counts the node from then on. Assumed not to happen: such runs are
   cut where that heartbeat is written. */
#define ASSUME_NO_LAUNDERING 1
#endif
#ifndef ASSUME_NO_BEHIND_LOSS
/* a FINDING: a marker's countsFrom is the node's own clock plus Q. A loss (or rollback)
   recorded while the node's clock stands behind (a stepped clock; a VM restored from a
   snapshot resumes at the snapshot's time) is over early, or at once, once the clock is
   corrected: a client that reads the marker only then (a new one, or one that had not
   read it yet) counts the node at once. Assumed not to happen: a run is cut where a
   loss is recorded with the clock so far behind that a later clearing reading (within
   1.5b) stands more than 3b ahead of it. */
#define ASSUME_NO_BEHIND_LOSS 1
#endif
#ifndef ASSUME_OLD_SNAPSHOT
/* a restored snapshot (keys, marker and statistics alike) was taken before a probe
   period in which A inspected the node: A saw a heartbeat the snapshot lacks, the only
   thing that can show the restore */
#define ASSUME_OLD_SNAPSHOT 1
#endif

/* ---------- documented windows (1: excused; 0: a violation in them is reported) ---------- */
#ifndef EXCUSE_RELOAD_WINDOW
/* DEBUG RELOAD leaves the connections open: rounds count the node until a probe or a
   greeting sees the DEBUG call in its statistics */
#define EXCUSE_RELOAD_WINDOW 1
#endif
#ifndef EXCUSE_RESTORE_WINDOW
/* a restored snapshot: a client remembering no later epoch counts the node until A,
   which does, inspects it (its next probe, within a probe period) */
#define EXCUSE_RESTORE_WINDOW 1
#endif

/* a node in an open documented window */
#define WINDOW(n) ((EXCUSE_RELOAD_WINDOW && reloadUnseen[n]) || (EXCUSE_RESTORE_WINDOW && restoreUnseen[n]))

#define TOL 2                 /* b */
#if GUARD_ALLOWANCE
#define DRIFT 6               /* 3b */
#else
#define DRIFT 0
#endif
#define BIG 20
#define HMIN (-1)
#define HMAX 1

/* reasons a marker records; LOSS and RBACK lose data (a new generation) */
#define R_CLEAN 0
#define R_CLOCK 1
#define R_LOSS 2
#define R_RBACK 3

/* NodeJudge verdicts */
#define V_COUNTS 1
#define V_REFUSED 2
#define V_PENDING 3

/* ClockConsensus verdicts */
#define C_UNDEC 0
#define C_CLEAR 1
#define C_AHEAD 2
#define C_BEHIND 3

/* a quarantine: none, one that outlasts A's lease, one that may lapse first */
#define Q_NONE 0
#define Q_GOOD 1
#define Q_LAPSE 2

#define PH_PRE 0              /* before A's round */
#define PH_AROUND 1           /* A's round */
#define PH_HOLD 2             /* A's lease is valid */
#define PH_AFTER 3            /* A's lease is over (fencing goes on) */
#define PH_DONE 4

#define CI(c, n) ((c) * N + (n))

byte phase;
byte T;                       /* probe periods passed */

/* ---------- nodes ---------- */
short off[N];                 /* clock offset, units of b/2 */
short home[N];                /* its honest offset, which a correction restores */
bit faulty[N];
byte fleft[N];                /* fault events left */
bit clockMoved[N];
bit probedA[N];               /* A's probe read its clock since it last moved */
byte drifts = DRIFTS;
byte cfEnds = CF_ENDS;

bit keyA[N];
bit aGot[N];                  /* A's SET set its key there */
short offSetA[N];             /* the offset then */
bit keyB[N];
short offSetB[N];

/* the marker */
bit mP[N];                    /* present */
byte mEp[N];                  /* epoch */
byte mGen[N];                 /* generation */
byte mRs[N];                  /* reason */
bit mCf[N];                   /* countsFrom was set a quarantine ahead */
short mCfOff[N];              /* the node's offset then: countsFrom is in its clock */
bit mCfEarly[N];              /* written before A's round */
bit mCfOver[N];               /* enough true time passed for it to be over */
byte mFl[N];                  /* evidence: FLUSH* and DEBUG calls when written */
byte mDb[N];
bit mDue[N];                  /* a probe period passed since its last write */
bit mOk[N];                   /* fencing counters ok */
byte fl[N];                   /* the node's statistics now */
byte db[N];
byte hw[N];                   /* highest epoch ever written: epochs follow the clock */
byte ghw[N];                  /* highest generation ever drawn */
byte cnt[N];                  /* the resource's fencing counter and its generation */
byte cgen[N];

/* one snapshot per faulty node, taken before A's round */
bit sTaken[N];
byte sAge[N];                 /* 0: no probe period since; 1: one has; 2: and A inspected since */
bit sP[N];
byte sEp[N];
byte sGen[N];
byte sRs[N];
bit sCf[N];
short sCfOff[N];
bit sCfEarly[N];
bit sCfOver[N];
byte sMFl[N];
byte sMDb[N];
bit sMDue[N];
bit sOk[N];
byte sFl[N];
byte sDb[N];
byte sCnt[N];
byte sCgen[N];

bit reloadUnseen[N];          /* reloaded; no probe or greeting inspected it since */
bit restoreUnseen[N];         /* restored; A has not inspected it since */
bit tainted[N];               /* its counters were re-seeded from a node in a window */

/* ---------- clients A (0) and B (1) ---------- */
bit running[2];
bit probedTick[2];            /* probed since the last probe period passed */
byte memEp[2 * N];            /* MarkerWatch.Memory: the highest epoch, its generation */
byte memGen[2 * N];
byte quar[2 * N];
byte toRec[2 * N];            /* a cause to write at its next inspection */
bit greeted[2 * N];           /* it has a greeted connection to the node */
byte bRounds = B_ROUNDS;
bit excluded;                 /* an assumption broke: the run is cut here */

/* ---------- the round under way (A's, then B's) ---------- */
bit rOn;
bit rWho;
bit rEx[N];                   /* the node executed the command */
bit rRd[N];                   /* its reply was read */
bit rGr[N];                   /* it granted */
short rLo[N];                 /* its clock reading */
short rHi[N];
bit rMP[N];                   /* the marker the reply carried */
byte rMEp[N];
byte rMGen[N];
byte rMRs[N];
byte rMQ[N];                  /* its countsFrom by the node's clock then */
bit rMOk[N];
byte rCn[N];                  /* a fenced grant's count, and its counter's generation */
byte rCg[N];
byte rBEp[N];                 /* what the client knew at the round's start */
byte rBGen[N];
byte rV[N];                   /* verdicts decided */
byte rOff[N];                 /* proven off in this round */
bit rWin[N];                  /* executed in an open documented window */
byte rCnt;                    /* readings taken */
bit rSettled;
byte tokA;
byte tokB;

/* an action's choices, made before its deterministic part, reset after */
byte pN;
byte pV;
byte pW;

/* scratch, inside d_steps only: not part of the state */
hidden byte i;
hidden byte j;
hidden byte k;
hidden byte n2;
hidden byte lt;
hidden byte le;
hidden byte cause;
hidden byte adm;
hidden byte cv;
hidden byte ver;
hidden byte mq;
hidden byte mx;
hidden byte cf;
hidden byte counting;
hidden byte pending;
hidden byte answered;
hidden byte excused;
hidden byte bEp;
hidden byte bGen;
hidden short X;
hidden short Y;
hidden short dX;
hidden byte decisive;
hidden short pLo[N];
hidden short pHi[N];
hidden byte pRd[N];
hidden byte rCounts[N];
hidden byte cv0[9];
hidden byte cv1[9];
hidden byte ca;
hidden byte cb;
hidden byte cc;
hidden byte cr;
hidden byte cl;
hidden byte cn;
hidden byte cp;

/* ================= clock consensus (ClockConsensus, ClockReadings) ================= */

/* the kk-th lowest (from 0) of the highs (hi) or lows over the readings taken (pRd) */
#define VAL(hi, x) ((hi) -> pHi[x] : pLo[x])
inline kthLowest(hi, kk, res) {
	i = 0;
	do
	:: i < N ->
		if
		:: pRd[i] ->
			lt = 0;
			le = 0;
			j = 0;
			do
			:: j < N ->
				if
				:: pRd[j] && VAL(hi, j) < VAL(hi, i) -> lt++; le++
				:: pRd[j] && VAL(hi, j) == VAL(hi, i) -> le++
				:: else -> skip
				fi;
				j++
			:: else -> break
			od;
			if
			:: lt <= kk && kk < le -> res = VAL(hi, i)
			:: else -> skip
			fi
		:: else -> skip
		fi;
		i++
	:: else -> break
	od
}

/* X: (f+1)-th highest low, Y: (f+1)-th lowest high, over the readings in pRd, pLo,
   pHi; decisive with more than f */
inline reference(count) {
	decisive = (count > F);
	if
	:: decisive -> kthLowest(0, count - F - 1, X); kthLowest(1, F, Y)
	:: else -> X = 0; Y = 0
	fi
}

/* the round's readings as the reference */
inline roundReference() {
	i = 0;
	do
	:: i < N -> pRd[i] = rRd[i]; pLo[i] = rLo[i]; pHi[i] = rHi[i]; i++
	:: else -> break
	od;
	reference(rCnt)
}

inline judgeClock(lo, hi, res) {
#if GUARD_CONSENSUS
	if
	:: !decisive -> res = C_UNDEC
	:: decisive && lo - Y > TOL -> res = C_AHEAD
	:: decisive && lo - Y <= TOL && X - hi > TOL -> res = C_BEHIND
	:: decisive && lo - Y <= TOL && X - hi <= TOL && hi - X <= TOL && Y - lo <= TOL -> res = C_CLEAR
	:: else -> res = C_UNDEC
	fi
#else
	/* no consensus: every clock is taken as it reads */
	res = C_CLEAR
#endif
}

/* ================= quarantines and causes (NodeQuarantine, MarkerWatch) ================= */

/* A's quarantines are read by A's round only: after it, they are not kept */
inline quarantine(c, n, kind) {
	if
	:: c == A && phase >= PH_HOLD -> skip
	:: (c == B || phase < PH_HOLD) && (kind == Q_GOOD || quar[CI(c, n)] == Q_NONE) -> quar[CI(c, n)] = kind
	:: else -> skip
	fi
}

/* Q from now: outlasts A's lease once A's round started, not after A's lease */
inline quarantineNow(c, n) {
	if
	:: phase == PH_PRE || phase == PH_AFTER -> quarantine(c, n, Q_LAPSE)
	:: else -> quarantine(c, n, Q_GOOD)
	fi
}

/* MarkerWatch.record: a cause that loses data wins over a clock step */
inline record(c, n, rs) {
#if GUARD_RECORD
	if
	:: toRec[CI(c, n)] == R_CLEAN || (toRec[CI(c, n)] == R_CLOCK && rs != R_CLOCK) -> toRec[CI(c, n)] = rs
	:: else -> skip
	fi
#else
	skip
#endif
}

/* MarkerWatch.found, NodeQuarantine.clockOff */
inline found(c, n, rs) {
	quarantineNow(c, n);
	record(c, n, rs)
}

/* MarkerWatch.remember */
inline remember(c, n, ep, gen) {
	if
	:: ep < memEp[CI(c, n)] -> skip
	:: ep == memEp[CI(c, n)] && gen == memGen[CI(c, n)] -> skip
	:: else -> memEp[CI(c, n)] = ep; memGen[CI(c, n)] = gen
	fi
}

/*
 * The marker's countsFrom against the node's clock now: Q_GOOD when it outlasts A's
 * lease (written once A's round started, the clock up by at most DRIFT since), Q_LAPSE
 * when ahead now but it may end first (then "time passes" may end it), Q_NONE when over.
 * The node's clock has passed it once it rose by BIG.
 */
inline markerQuarantine(n, res) {
	dX = off[n] - mCfOff[n];
	if
	:: !mCf[n] || dX >= BIG -> res = Q_NONE
	:: mCf[n] && dX < BIG && !mCfEarly[n] && dX <= DRIFT && phase != PH_AFTER -> res = Q_GOOD
	:: else ->
		if
		:: mCfOver[n] -> res = Q_NONE
		:: else -> res = Q_LAPSE
		fi
	fi
}

/* MarkerWatch.observe: remembers the marker and honours its countsFrom */
inline observe(c, n, ep, gen, mqs, res) {
	remember(c, n, ep, gen);
	if
	:: GUARD_COUNTSFROM && mqs != Q_NONE ->
		if
		:: phase == PH_PRE || mqs == Q_LAPSE -> quarantine(c, n, Q_LAPSE)
		:: else -> quarantine(c, n, Q_GOOD)
		fi;
		res = 0
	:: else -> res = 1
	fi
}

/* ================= marker writes (LockScripts.WRITE_MARKER: the node sets the epoch) ================= */

/* epochs only tell rollbacks: without them, they need not move */
inline writeEpoch(n) {
#if RELOAD_FAULTS || RESTORE_FAULTS
	hw[n]++;
	mEp[n] = hw[n];
#endif
	mDue[n] = 0
}

/* a cause's countsFrom: a quarantine from the node's clock now */
inline writeCountsFrom(n, rs) {
#if ASSUME_NO_BEHIND_LOSS
	excluded = excluded || (rs >= R_LOSS && off[n] < 3 - 6);
#endif
	mCf[n] = 1;
	mCfOff[n] = off[n];
	mCfEarly[n] = (phase == PH_PRE);
	mCfOver[n] = 0
}

/*
 * MarkerWatch.inspect for a greeting or a probe of client c, before = (bEp, bGen):
 * judges the marker against what c knew and the node's evidence, writes what is to be
 * written, and observes the marker in place. The compare-and-set is one step with the
 * read: what could come between is a fault, which the CAS would refuse, leaving the
 * node's state as the fault left it.
 */
inline inspect(c, n) {
	cause = R_CLEAN;
	if
	:: mP[n] ->
		if
		:: GUARD_EPOCH && mEp[n] < bEp -> cause = R_RBACK
		:: else ->
			if
			:: bGen != 0 && mGen[n] != bGen && mRs[n] == R_CLEAN -> cause = R_LOSS
			:: else -> skip
			fi
		fi;
#if GUARD_EVIDENCE
		if
		:: cause == R_CLEAN && (fl[n] < mFl[n] || db[n] < mDb[n]) -> cause = R_LOSS
		:: cause == R_CLEAN && fl[n] >= mFl[n] && db[n] > mDb[n] -> cause = R_RBACK
		:: cause == R_CLEAN && fl[n] > mFl[n] && db[n] == mDb[n] -> cause = R_LOSS
		:: else -> skip
		fi
#endif
	:: else ->
		if
		:: GUARD_GONE && bGen != 0 -> cause = R_LOSS
		:: else -> skip
		fi
	fi;
	if
	:: cause == R_CLEAN -> cause = toRec[CI(c, n)]
	:: else -> skip
	fi;
	if
	:: cause != R_CLEAN -> quarantineNow(c, n)
	:: else -> skip
	fi;
	toRec[CI(c, n)] = R_CLEAN;
	if
	:: !mP[n] ->
		/* a new marker: the cause; else clean if the node lost nothing since it
		   started (it is up for longer than Q here); else a loss */
		mP[n] = 1;
		ghw[n]++;
		mGen[n] = ghw[n];
		mOk[n] = 0;
		tainted[n] = 0;
		if
		:: cause != R_CLEAN -> mRs[n] = cause; writeCountsFrom(n, cause)
		:: cause == R_CLEAN && fl[n] == 0 && db[n] == 0 -> mRs[n] = R_CLEAN; mOk[n] = 1
		:: else -> mRs[n] = R_LOSS; writeCountsFrom(n, R_LOSS)
		fi;
		mFl[n] = fl[n];
		mDb[n] = db[n];
		writeEpoch(n)
	:: else ->
		markerQuarantine(n, mq);
		if
		:: cause != R_CLEAN && (cause >= R_LOSS || !(mq != Q_NONE && mRs[n] == cause)) ->
			/* recorded: a quarantine ahead, never shortened; a new generation for a
			   loss */
			if
			:: mq != Q_NONE && !mCfEarly[n] && mCfOff[n] > off[n] -> skip
			:: else -> writeCountsFrom(n, cause)
			fi;
			mRs[n] = cause;
			if
			:: cause >= R_LOSS -> ghw[n]++; mGen[n] = ghw[n]; mOk[n] = 0; tainted[n] = 0
			:: else -> skip
			fi;
			mFl[n] = fl[n];
			mDb[n] = db[n];
			writeEpoch(n)
		:: else ->
			if
			:: (GUARD_HEARTBEAT && mDue[n]) || fl[n] != mFl[n] || db[n] != mDb[n] ->
				/* a heartbeat: the epoch rises, the evidence is brought up to date */
#if ASSUME_NO_LAUNDERING
				excluded = excluded || (restoreUnseen[n] && c != A);
#endif
				mFl[n] = fl[n];
				mDb[n] = db[n];
				writeEpoch(n)
			:: else -> skip
			fi
		fi
	fi;
	/* MarkerWatch.written, or the marker read taken note of */
	markerQuarantine(n, mq);
	observe(c, n, mEp[n], mGen[n], mq, adm);
	reloadUnseen[n] = 0;
	if
	:: c == A ->
		restoreUnseen[n] = 0;
		if
		:: sAge[n] == 1 -> sAge[n] = 2
		:: else -> skip
		fi
	:: else -> skip
	fi;
	greeted[CI(c, n)] = 1
}

/* a greeting or a new connection's inspection, before = the memory now */
inline greet(c, n) {
	bEp = memEp[CI(c, n)];
	bGen = memGen[CI(c, n)];
	inspect(c, n)
}

/* NodeProbe.run: every node's clock judged together, then each node inspected */
inline probe(c) {
	n2 = 0;
	do
	:: n2 < N ->
		if
		:: !greeted[CI(c, n2)] -> greet(c, n2)
		:: else -> skip
		fi;
		pLo[n2] = off[n2];
		pHi[n2] = off[n2];
		pRd[n2] = 1;
		n2++
	:: else -> break
	od;
	reference(N);
	n2 = 0;
	do
	:: n2 < N ->
		judgeClock(pLo[n2], pHi[n2], cv);
		if
		:: cv == C_AHEAD || cv == C_BEHIND -> found(c, n2, R_CLOCK)
		:: else -> skip
		fi;
		n2++
	:: else -> break
	od;
	n2 = 0;
	do
	:: n2 < N ->
		greet(c, n2);
		if
		:: c == A && clockMoved[n2] -> probedA[n2] = 1
		:: else -> skip
		fi;
		n2++
	:: else -> break
	od;
	probedTick[c] = PROBE_EVERY_PERIOD
}

/* B starts, knowing nothing: its first probe and warm-up open a connection to every
   node, each greeted */
inline bStart() {
	printf("B starts and greets every node\n");
	running[B] = 1;
	n2 = 0;
	do
	:: n2 < N -> greet(B, n2); n2++
	:: else -> break
	od;
	n2 = 0
}

/* ================= acquisition rounds (AcquireRound, NodeJudge) ================= */

inline roundStart(c) {
	rOn = 1;
	rWho = c;
	k = 0;
	do
	:: k < N -> rBEp[k] = memEp[CI(c, k)]; rBGen[k] = memGen[CI(c, k)]; k++
	:: else -> break
	od;
	k = 0
}

/*
 * The node runs the round's command: SET NX PX, TIME and GET of the marker, one step
 * (a fenced lock's script is one; a plain lock's pipeline runs its three commands back
 * to back). The reading is [off - wl, off + wh], widths from pW.
 */
inline execNode(c, n) {
	if
	:: c == A -> rGr[n] = 1; keyA[n] = 1; aGot[n] = 1; offSetA[n] = off[n]
	:: else ->
		rGr[n] = !keyA[n];
		if
		:: rGr[n] -> keyB[n] = 1; offSetB[n] = off[n]
		:: else -> skip
		fi
	fi;
	rLo[n] = off[n] - (pW / 2);
	rHi[n] = off[n] + (pW % 2);
	rMP[n] = mP[n];
	rMEp[n] = mEp[n];
	rMGen[n] = mGen[n];
	rMRs[n] = mRs[n];
	rMOk[n] = mOk[n];
	markerQuarantine(n, mq);
	rMQ[n] = mq;
#if FENCING
	if
	:: rGr[n] -> cnt[n]++; rCn[n] = cnt[n]; rCg[n] = cgen[n]
	:: else -> skip
	fi;
#endif
	rWin[n] = WINDOW(n) || tainted[n];
	rEx[n] = 1
}

/* MarkerWatch.admits, with what the client knew at the round's start */
inline markerAdmits(c, n) {
	if
	:: !rMP[n] ->
		if
		:: GUARD_GONE && rBGen[n] != 0 -> found(c, n, R_LOSS); adm = 0
		:: GUARD_GONE && rBGen[n] == 0 -> adm = 0
		:: else -> adm = 1
		fi
	:: else ->
		cause = R_CLEAN;
		if
		:: GUARD_EPOCH && rMEp[n] < rBEp[n] -> cause = R_RBACK
		:: else ->
			if
			:: rBGen[n] != 0 && rMGen[n] != rBGen[n] && rMRs[n] == R_CLEAN -> cause = R_LOSS
			:: else -> skip
			fi
		fi;
		if
		:: cause != R_CLEAN -> found(c, n, cause); adm = 0
		:: else -> observe(c, n, rMEp[n], rMGen[n], rMQ[n], adm)
		fi
	fi
}

/* NodeJudge.judge (and AcquireExit.verdict), for a reply read */
inline verdict(c, n) {
	if
	:: !rGr[n] -> ver = V_REFUSED
	:: rGr[n] && rV[n] != 0 ->
		if
		:: rV[n] == V_COUNTS && quar[CI(c, n)] != Q_NONE -> ver = V_REFUSED
		:: else -> ver = rV[n]
		fi
	:: rGr[n] && rV[n] == 0 ->
		if
		:: quar[CI(c, n)] != Q_NONE -> rV[n] = V_REFUSED; ver = V_REFUSED
		:: else ->
			markerAdmits(c, n);
			if
			:: !adm -> rV[n] = V_REFUSED; ver = V_REFUSED
			:: else ->
				if
				:: rOff[n] != 0 -> cv = rOff[n]
				:: else -> judgeClock(rLo[n], rHi[n], cv)
				fi;
				if
				:: cv == C_CLEAR -> rV[n] = V_COUNTS; ver = V_COUNTS
				:: cv == C_AHEAD || cv == C_BEHIND -> rV[n] = V_REFUSED; ver = V_REFUSED
				:: else ->
#if GUARD_PENDING
					ver = V_PENDING
#else
					rV[n] = V_COUNTS;
					ver = V_COUNTS
#endif
				fi
			fi
		fi
	fi;
#if FENCING && GUARD_CONFIRMED
	/* a counter counts if a quorum confirmed it since the node last forgot */
	if
	:: ver == V_COUNTS && !(rMP[n] && (rMOk[n] || rMGen[n] == rCg[n])) -> ver = V_REFUSED
	:: else -> skip
	fi;
#endif
	skip
}

/* what a decided reply no longer needs (fewer states, same behaviour): its marker and
   what the client knew are read only while it is undecided */
inline forgetDecided() {
	k = 0;
	do
	:: k < N ->
		if
		:: rRd[k] && (!rGr[k] || rV[k] != 0) ->
			rMEp[k] = 0;
			rMRs[k] = 0;
			rMQ[k] = 0;
			rBEp[k] = 0;
			rBGen[k] = 0;
#if !FENCING
			rMP[k] = 0;
			rMGen[k] = 0;
			rMOk[k] = 0;
#endif
			if
			:: rV[k] != V_COUNTS -> rWin[k] = 0; rMP[k] = 0; rMGen[k] = 0; rMOk[k] = 0; rCn[k] = 0; rCg[k] = 0
			:: else -> skip
			fi
		:: else -> skip
		fi;
		k++
	:: else -> break
	od;
	k = 0
}

/* every reply read judged: AcquireExit.granted and settled */
inline evaluate(c) {
	roundReference();
	counting = 0;
	pending = 0;
	answered = 0;
	k = 0;
	do
	:: k < N ->
		rCounts[k] = 0;
		if
		:: rRd[k] ->
			answered++;
			verdict(c, k);
			if
			:: ver == V_COUNTS -> counting++; rCounts[k] = 1
			:: ver == V_PENDING -> pending++
			:: else -> skip
			fi
		:: else -> skip
		fi;
		k++
	:: else -> break
	od;
	/* Quorum.settled, a pending grant being no refusal yet */
	rSettled = (counting >= QU || answered - counting - pending > N - QU);
	forgetDecided()
}

/* ClockReadings.read: the reading joins the reference; nodes proven off are quarantined */
inline readNode(c, n) {
	rRd[n] = 1;
	rCnt++;
	roundReference();
	n2 = 0;
	do
	:: n2 < N ->
		if
		:: rRd[n2] && rOff[n2] == 0 ->
			judgeClock(rLo[n2], rHi[n2], cv);
			if
			:: cv == C_AHEAD || cv == C_BEHIND -> rOff[n2] = cv; found(c, n2, R_CLOCK)
			:: else -> skip
			fi
		:: else -> skip
		fi;
		n2++
	:: else -> break
	od;
	evaluate(c)
}

inline roundClear() {
	rOn = 0;
	rWho = 0;
	rCnt = 0;
	rSettled = 0;
	k = 0;
	do
	:: k < N ->
		rEx[k] = 0; rRd[k] = 0; rGr[k] = 0; rLo[k] = 0; rHi[k] = 0; rMP[k] = 0; rMEp[k] = 0;
		rMGen[k] = 0; rMRs[k] = 0; rMQ[k] = 0; rMOk[k] = 0; rCn[k] = 0; rCg[k] = 0; rBEp[k] = 0;
		rBGen[k] = 0; rV[k] = 0; rOff[k] = 0; rWin[k] = 0;
		k++
	:: else -> break
	od
}

/*
 * AcquireRound.confirmToken: the highest count among the counting grants; unless a
 * quorum of them has it, a second round raises the counter on the nodes (bits of pV)
 * that still hold the value, and the token stands if a quorum of counting nodes
 * confirms it. 0 when it does not stand.
 */
inline token(c, tok) {
	mx = 0;
	lt = 0;
	k = 0;
	do
	:: k < N ->
		if
		:: rCounts[k] && rCn[k] > mx -> mx = rCn[k]; lt = 1
		:: rCounts[k] && rCn[k] == mx -> lt++
		:: else -> skip
		fi;
		k++
	:: else -> break
	od;
	if
	:: lt >= QU || !GUARD_CONFIRM_ROUND -> tok = mx
	:: else ->
		le = 0;
		k = 0;
		do
		:: k < N ->
			if
			:: (pV & (1 << k)) && ((c == A && keyA[k]) || (c == B && keyB[k])) ->
				if
				:: cnt[k] < mx -> cnt[k] = mx
				:: else -> skip
				fi;
				if
				:: mP[k] -> cgen[k] = mGen[k]
				:: else -> cgen[k] = 0
				fi;
				if
				:: quar[CI(c, k)] == Q_NONE -> le++
				:: else -> skip
				fi
			:: else -> skip
			fi;
			k++
		:: else -> break
		od;
		if
		:: le >= QU -> tok = mx
		:: else -> tok = 0
		fi
	fi
}

/* the round ends: AcquireRound.settle */
inline roundEnd(c) {
	evaluate(c);
	if
	:: c == A ->
		if
		:: counting >= QU ->
#if FENCING
			token(A, tokA);
			if
			:: tokA > 0 -> phase = PH_HOLD
			:: else -> phase = PH_DONE
			fi;
#else
			phase = PH_HOLD;
#endif
#ifdef FENCE
			/* tokens are compared after A's lease: it ends at once */
			if
			:: phase == PH_HOLD ->
				phase = PH_AFTER;
				k = 0;
				do
				:: k < N -> keyA[k] = 0; k++
				:: else -> break
				od
			:: else -> skip
			fi;
#endif
			/* A's quarantines are not read again */
			k = 0;
			do
			:: k < N -> quar[CI(A, k)] = Q_NONE; k++
			:: else -> break
			od
		:: else -> phase = PH_DONE
		fi
	:: else ->
#if FENCING
		if
		:: counting >= QU -> token(B, tokB)
		:: else -> skip
		fi;
		if
		:: counting >= QU && tokB == 0 -> counting = 0
		:: else -> skip
		fi;
#endif
		if
		:: counting >= QU ->
			/* a node of A's quorum that B counts had dropped A's key (it granted B);
			   a documented window may excuse it */
			excused = 0;
			k = 0;
			do
			:: k < N ->
				if
				:: rCounts[k] && aGot[k] && rWin[k] -> excused = 1
				:: else -> skip
				fi;
				k++
			:: else -> break
			od;
			assert(phase != PH_HOLD || excused);
#if FENCING
			assert(phase != PH_AFTER || tokB > tokA || excused);
#endif
			phase = PH_DONE
		:: else ->
			/* a lost round deletes its value where it landed */
			k = 0;
			do
			:: k < N -> keyB[k] = 0; offSetB[k] = 0; k++
			:: else -> break
			od;
			bRounds--;
			if
			:: bRounds == 0 && !FENCING -> phase = PH_DONE
			:: else -> skip
			fi
		fi
	fi;
	roundClear()
}

/* ================= faults ================= */

/* the clock moves: pV picks the step */
/* (in units of b/2; 6 is 3b, the largest step a lease's allowance absorbs) */
#if FINE_STEPS
#define STEPS 10
#define STEP(v) ((v) == 0 -> -BIG : ((v) == 1 -> -7 : ((v) == 2 -> -4 : ((v) == 3 -> -2 : ((v) == 4 -> BIG : ((v) == 5 -> 7 : ((v) == 6 -> 6 : ((v) == 7 -> 4 : ((v) == 8 -> 2 : 1)))))))))
#else
#define STEPS 3
#define STEP(v) ((v) == 0 -> -BIG : ((v) == 1 -> BIG : 2))
#endif
#define CORRECTION 99

inline dropKeys(n) {
	if
	:: keyA[n] && off[n] - offSetA[n] > DRIFT -> keyA[n] = 0
	:: else -> skip
	fi;
	if
	:: keyB[n] && off[n] - offSetB[n] > DRIFT -> keyB[n] = 0
	:: else -> skip
	fi
}

inline clockStep(n) {
	if
	:: pV == CORRECTION -> off[n] = home[n]
	:: else -> off[n] = off[n] + STEP(pV)
	fi;
	clockMoved[n] = 1;
	probedA[n] = 0;
	fleft[n]--;
	dropKeys(n)
}

inline snapshot(n) {
	sTaken[n] = 1;
	sAge[n] = 0;
	sP[n] = mP[n]; sEp[n] = mEp[n]; sGen[n] = mGen[n]; sRs[n] = mRs[n]; sCf[n] = mCf[n];
	sCfOff[n] = mCfOff[n]; sCfEarly[n] = mCfEarly[n]; sCfOver[n] = mCfOver[n]; sMFl[n] = mFl[n];
	sMDb[n] = mDb[n]; sMDue[n] = mDue[n]; sOk[n] = mOk[n]; sFl[n] = fl[n]; sDb[n] = db[n];
	sCnt[n] = cnt[n]; sCgen[n] = cgen[n]
}

/* keys, marker and counters go back to the snapshot (it holds no key of ours) */
inline goBack(n) {
	keyA[n] = 0;
	keyB[n] = 0;
	mP[n] = sP[n]; mEp[n] = sEp[n]; mGen[n] = sGen[n]; mRs[n] = sRs[n]; mCf[n] = sCf[n];
	mCfOff[n] = sCfOff[n]; mCfEarly[n] = sCfEarly[n]; mCfOver[n] = sCfOver[n]; mFl[n] = sMFl[n];
	mDb[n] = sMDb[n]; mOk[n] = sOk[n]; cnt[n] = sCnt[n]; cgen[n] = sCgen[n];
	/* its marker was written before the snapshot: due once a probe period passed since */
	mDue[n] = sMDue[n] || sAge[n] != 0;
	fleft[n]--
}

/* DEBUG RELOAD of an older dump: its DEBUG call stays counted, connections stay open */
inline reload(n) {
	goBack(n);
	db[n]++;
	reloadUnseen[n] = 1
}

/* a restored VM or container snapshot: statistics go back too; pV: connections break */
inline restore(n) {
	goBack(n);
	fl[n] = sFl[n];
	db[n] = sDb[n];
	restoreUnseen[n] = 1;
	if
	:: pV -> greeted[CI(A, n)] = 0; greeted[CI(B, n)] = 0
	:: else -> skip
	fi
}

/* FLUSHALL: every key goes, the marker and the counters too */
inline flush(n) {
	keyA[n] = 0;
	keyB[n] = 0;
	mP[n] = 0; mEp[n] = 0; mGen[n] = 0; mRs[n] = 0; mCf[n] = 0; mCfOff[n] = 0; mCfEarly[n] = 0;
	mCfOver[n] = 0; mFl[n] = 0; mDb[n] = 0; mDue[n] = 0; mOk[n] = 0;
	cnt[n] = 0;
	cgen[n] = 0;
	fl[n]++;
	fleft[n]--
}

/* CounterReseed: the highest counters of the other nodes whose own counters are ok, done
   when at least N - q + 1 of them were read (pV: one other node not reached, 4: none) */
inline reseed(n) {
	mx = 0;
	cn = 0;
	cp = 0;
	k = 0;
	j = 0;
	do
	:: k < N ->
		if
		:: k != n ->
#if GUARD_RESEED_QUORUM
			/* pV: the other node not read (4: none); a node that forgot too is no source */
			if
			:: j != pV && (!GUARD_RESEED_OK || (mP[k] && mOk[k])) ->
				cn++;
				if
				:: cnt[k] > mx -> mx = cnt[k]
				:: else -> skip
				fi;
				/* what a node in a documented window gives is excused with it */
				tainted[n] = tainted[n] || WINDOW(k) || tainted[k]
			:: j != pV && GUARD_RESEED_OK && !(mP[k] && mOk[k]) ->
				/* forgetful: a source only when more than F forgot (never here) */
				cp++
			:: else -> skip
			fi;
#else
			/* one other node only */
			if
			:: j == pV ->
				cn = N - QU + 1;
				if
				:: cnt[k] > mx -> mx = cnt[k]
				:: else -> skip
				fi
			:: else -> skip
			fi;
#endif
			j++
		:: else -> skip
		fi;
		k++
	:: else -> break
	od;
	assert(cp + 1 <= F);
	if
	:: cn >= N - QU + 1 ->
		if
		:: mx > 0 ->
			if
			:: cnt[n] < mx -> cnt[n] = mx
			:: else -> skip
			fi;
			cgen[n] = mGen[n]
		:: else -> skip
		fi;
		mOk[n] = 1;
		writeEpoch(n)
	:: else ->
		/* too few sources: not re-seeded, tried again when the marker is next seen */
		skip
	fi
}

/*
 * Epochs are only compared, generations only matched: after each step they are renamed,
 * in order and by first appearance, among the values that are still held somewhere, so
 * that histories differing only in their numbers are one state. The next epoch written
 * exceeds every one held (hw), as the node's clock makes it.
 */
inline canonNode(n) {
	cv0[0] = mEp[n]; cv0[1] = sEp[n]; cv0[2] = memEp[CI(A, n)]; cv0[3] = memEp[CI(B, n)];
	cv0[4] = rMEp[n]; cv0[5] = rBEp[n];
	cl = 0;
	ca = 0;
	do
	:: ca < 6 ->
		cr = 0;
		if
		:: cv0[ca] != 0 ->
			cb = 0;
			do
			:: cb < 6 ->
				/* a distinct value at most this one: counted at its first slot */
				if
				:: cv0[cb] != 0 && cv0[cb] <= cv0[ca] ->
					cc = 0;
					do
					:: cc < cb && cv0[cc] != cv0[cb] -> cc++
					:: else -> break
					od;
					if
					:: cc == cb -> cr++
					:: else -> skip
					fi
				:: else -> skip
				fi;
				cb++
			:: else -> break
			od
		:: else -> skip
		fi;
		cv1[ca] = cr;
		if
		:: cr > cl -> cl = cr
		:: else -> skip
		fi;
		ca++
	:: else -> break
	od;
	mEp[n] = cv1[0]; sEp[n] = cv1[1]; memEp[CI(A, n)] = cv1[2]; memEp[CI(B, n)] = cv1[3];
	rMEp[n] = cv1[4]; rBEp[n] = cv1[5];
	hw[n] = cl;
	cv0[0] = mGen[n]; cv0[1] = sGen[n]; cv0[2] = memGen[CI(A, n)]; cv0[3] = memGen[CI(B, n)];
	cv0[4] = rMGen[n]; cv0[5] = rBGen[n]; cv0[6] = rCg[n]; cv0[7] = cgen[n]; cv0[8] = sCgen[n];
	cl = 0;
	ca = 0;
	do
	:: ca < 9 ->
		if
		:: cv0[ca] == 0 -> cv1[ca] = 0
		:: else ->
			cc = 0;
			do
			:: cc < ca && cv0[cc] != cv0[ca] -> cc++
			:: else -> break
			od;
			if
			:: cc == ca -> cl++; cv1[ca] = cl
			:: else -> cv1[ca] = cv1[cc]
			fi
		fi;
		ca++
	:: else -> break
	od;
	mGen[n] = cv1[0]; sGen[n] = cv1[1]; memGen[CI(A, n)] = cv1[2]; memGen[CI(B, n)] = cv1[3];
	rMGen[n] = cv1[4]; rBGen[n] = cv1[5]; rCg[n] = cv1[6]; cgen[n] = cv1[7]; sCgen[n] = cv1[8];
	ghw[n] = cl;
	ca = 0; cb = 0; cc = 0; cr = 0; cl = 0
}

/* after every step: the faulty nodes (the others' epochs and generations never move) */
#define CANON \
	cn = 0; \
	do \
	:: cn < N -> \
		if \
		:: faulty[cn] -> canonNode(cn) \
		:: else -> skip \
		fi; \
		cn++ \
	:: else -> break \
	od; \
	cn = 0

#define ACTIVE (phase != PH_DONE && !excluded)
#define DATA_PHASE (EARLY_DATA_FAULTS || phase != PH_PRE)
#define ALL_READ (rRd[0] && rRd[1] && rRd[2] && rRd[3] && rRd[4])

/* which node an action picks, among those where cond(n) holds */
#define PICK5(cond) \
	if \
	:: cond(0) -> pN = 0 \
	:: cond(1) -> pN = 1 \
	:: cond(2) -> pN = 2 \
	:: cond(3) -> pN = 3 \
	:: cond(4) -> pN = 4 \
	fi
/* the faulty nodes are among 0, 1, 3 and 4 (node 2 stands for A's honest nodes) */
#define PICKF(cond) \
	if \
	:: cond(0) -> pN = 0 \
	:: cond(1) -> pN = 1 \
	:: cond(3) -> pN = 3 \
	:: cond(4) -> pN = 4 \
	fi

#define CAN_GREET(n) (ACTIVE && (!greeted[CI(A, n)] || (running[B] && !greeted[CI(B, n)])))
/* a quarantine that may lapse does so before the round that reads it: A's before its
   round, B's once it may try */
#define LAPSES(q) (ACTIVE && ((q) < N -> phase < PH_HOLD : phase == PH_HOLD) && quar[q] == Q_LAPSE)
#define CF_OVER(n) (ACTIVE && phase != PH_AFTER && cfEnds > 0 && mCf[n] && !mCfOver[n] \
	&& off[n] - mCfOff[n] < BIG && (mCfEarly[n] || off[n] - mCfOff[n] > DRIFT))
/* honest nodes of a group (A's quorum, the others) whose clocks read alike are
   interchangeable: they run a round's command in index order */
#define GROUP(n) ((n) < QU)
#define ALIKE(m, n) (!faulty[m] && !faulty[n] && GROUP(m) == GROUP(n) && off[m] == off[n] && cnt[m] == cnt[n])
#define IN_ORDER(n) (((n) < 1 || !ALIKE(0, n) || rEx[0]) && ((n) < 2 || !ALIKE(1, n) || rEx[1]) \
	&& ((n) < 3 || !ALIKE(2, n) || rEx[2]) && ((n) < 4 || !ALIKE(3, n) || rEx[3]))
#define A_EXEC(n) (phase == PH_AROUND && rOn && !rEx[n] && greeted[CI(A, n)] && IN_ORDER(n))
#define B_EXEC(n) (ACTIVE && rOn && rWho == B && !rEx[n] && greeted[CI(B, n)] && IN_ORDER(n))
#define B_MAY_TRY (ACTIVE && (phase == PH_HOLD || (FENCING && phase == PH_AFTER)) && (running[B] || !B_START_ANY) && !rOn && bRounds > 0)
#define NO_B_EXEC (!(B_EXEC(0) || B_EXEC(1) || B_EXEC(2) || B_EXEC(3) || B_EXEC(4)))
#define B_READ(n) (ACTIVE && rOn && rWho == B && rEx[n] && !rRd[n])
#define CLOCK_MOVES(n) (ACTIVE && CLOCK_FAULTS && faulty[n] && fleft[n] > 0 \
	&& (!ASSUME_PROBED_STATES || !clockMoved[n] || probedA[n]))
#define SNAPSHOT(n) ((RELOAD_FAULTS || RESTORE_FAULTS) && phase == PH_PRE && faulty[n] && fleft[n] > 0 && !sTaken[n])
#define ROLLS(n) (ACTIVE && DATA_PHASE && faulty[n] && fleft[n] > 0 && sTaken[n])
#define RELOAD(n) (RELOAD_FAULTS && ROLLS(n))
#define RESTORE(n) (RESTORE_FAULTS && ROLLS(n) && (!ASSUME_OLD_SNAPSHOT || sAge[n] == 2))
#define FLUSH(n) (ACTIVE && FLUSH_FAULTS && DATA_PHASE && faulty[n] && fleft[n] > 0)
#define DRIFTS_HERE(n) (ACTIVE && drifts > 0 && !faulty[n])
#define RESEEDS(n) (ACTIVE && FENCING && mP[n] && !mOk[n])

/* ================= the world ================= */

active proctype world() {
	/* which nodes are faulty, up to symmetry: node 0 of A's quorum, and node 1 of it or
	   node 3 outside it (a faulty node need suffer no fault) */
	if
#if ONE_FAULTY
	/* one forgetful node suffices against a bare quorum */
	:: faulty[0] = 1
#else
	:: faulty[0] = 1; faulty[1] = 1
#endif
#if BOTH_SETS
	:: faulty[0] = 1; faulty[3] = 1
#endif
	fi;
	/* honest offsets, in rising order within each group of alike nodes */
	pN = 0;
	do
	:: pN < N ->
		if
		:: HONEST_ZERO || faulty[pN] -> home[pN] = 0
#if PATTERNS
		:: HONEST_ZERO || !faulty[pN] -> home[pN] = HMIN
		:: HONEST_ZERO || !faulty[pN] -> home[pN] = HMAX
#else
		/* clocks play no part: one pattern */
		:: !faulty[pN] -> home[pN] = 0
#endif
		fi;
		if
		:: pN != 0 && pN != 3 && faulty[pN] == faulty[pN - 1] && home[pN] < home[pN - 1] -> goto stop
		:: else -> skip
		fi;
		d_step {
			off[pN] = home[pN];
			/* a clean marker written long ago, which A has read */
			mP[pN] = 1;
			mEp[pN] = 1;
			mGen[pN] = 1;
			mOk[pN] = 1;
			hw[pN] = 1;
			ghw[pN] = 1;
			memEp[CI(A, pN)] = 1;
			memGen[CI(A, pN)] = 1;
			greeted[CI(A, pN)] = 1;
			if
			:: faulty[pN] -> fleft[pN] = FAULTS
			:: else -> skip
			fi;
			pN++
		}
	:: else -> break
	od;
	pN = 0;
	running[A] = 1;
#if FENCING
	/* the counters as earlier holders left them: untouched, or a token of 2 confirmed
	   on a quorum that A's nodes 1 and 2 (or 0 and 1) were not part of */
	if
	:: cnt[0] = 2; cnt[3] = 2; cnt[4] = 2
	:: cnt[2] = 2; cnt[3] = 2; cnt[4] = 2
	:: skip
	fi;
#endif
#if !B_START_ANY
	/* B is warm (here from the start), or new (it starts when it tries) */
	if
	:: d_step { bStart() }
	:: skip
	fi;
#endif

	do
	:: phase == PH_DONE || excluded -> break
	:: atomic {
	/* one step of the world, then its epochs and generations renamed (CANON) */
	if
	/* ---- clients ---- */
#if B_START_ANY
	:: ACTIVE && !running[B] ->
		d_step { bStart() }
#endif
	:: ACTIVE ->
		d_step { printf("A probes\n"); probe(A) }
#if B_PROBES
	:: ACTIVE && running[B] ->
		d_step { printf("B probes\n"); probe(B) }
#endif
	:: atomic {
			PICK5(CAN_GREET);
			if
			:: !greeted[CI(A, pN)] -> pV = A
			:: running[B] && !greeted[CI(B, pN)] -> pV = B
			fi
		};
		/* a new connection's greeting */
		d_step { printf("%c greets node %d\n", (pV == A -> 'A' : 'B'), pN); greet(pV, pN); pV = 0; pN = 0 }
	:: ACTIVE && T < TICKS && !rOn && (!PROBE_EVERY_PERIOD || (probedTick[A] && (!running[B] || probedTick[B]))) ->
		/* a probe period passes (no round lasts one): every marker is due for a heartbeat */
		d_step {
			printf("a probe period passes\n");
			T++;
			probedTick[A] = 0;
			probedTick[B] = 0;
			k = 0;
			do
			:: k < N ->
				/* honest nodes never go back: their epochs need not rise */
				mDue[k] = mP[k] && faulty[k];
				if
				:: sTaken[k] && sAge[k] == 0 -> sAge[k] = 1
				:: else -> skip
				fi;
				k++
			:: else -> break
			od;
			k = 0
		}
	:: atomic {
			if
			:: LAPSES(0) -> pN = 0
			:: LAPSES(1) -> pN = 1
			:: LAPSES(2) -> pN = 2
			:: LAPSES(3) -> pN = 3
			:: LAPSES(4) -> pN = 4
			:: LAPSES(5) -> pN = 5
			:: LAPSES(6) -> pN = 6
			:: LAPSES(7) -> pN = 7
			:: LAPSES(8) -> pN = 8
			:: LAPSES(9) -> pN = 9
			fi
		};
		/* time passes: a quarantine that may lapse ends */
		d_step { printf("%c's quarantine of node %d ends\n", (pN < N -> 'A' : 'B'), pN % N); quar[pN] = Q_NONE; pN = 0 }
	:: ACTIVE && phase == PH_AFTER && cfEnds > 0 && !rOn ->
		/* after A's lease, a restart quarantine passes: every quarantine so far ends */
		d_step {
			printf("a restart quarantine passes\n");
			cfEnds--;
			k = 0;
			do
			:: k < N ->
				quar[CI(A, k)] = Q_NONE;
				quar[CI(B, k)] = Q_NONE;
				mCfOver[k] = mCf[k];
				k++
			:: else -> break
			od;
			k = 0
		}
	:: atomic { PICK5(CF_OVER) };
		/* time passes: a marker's countsFrom that may be over is */
		d_step { printf("node %d: its marker's countsFrom is over\n", pN); mCfOver[pN] = 1; cfEnds--; pN = 0 }

	/* ---- A's round: its SET reaches nodes 0, 1 and 2 ---- */
#if A_SPLIT
	:: phase == PH_PRE ->
		d_step { printf("A starts its round\n"); roundStart(A); phase = PH_AROUND }
	:: atomic {
			if
			:: A_EXEC(0) -> pN = 0
			:: A_EXEC(1) -> pN = 1
			:: A_EXEC(2) -> pN = 2
			fi;
			if
			:: pW = 0
#if WMAX > 0
			:: pW = 1
			:: pW = 2
			:: pW = 3
#endif
			fi
		};
		d_step { printf("A: node %d runs SET (offset %d), reply read\n", pN, off[pN]); execNode(A, pN); readNode(A, pN); pN = 0; pW = 0 }
	:: phase == PH_AROUND && rOn && rRd[0] && rRd[1] && rRd[2] ->
		/* a second fenced round, if any, reaches every node */
		d_step { pV = 31; roundEnd(A); pV = 0; printf("A's round ends, won: %d, token %d\n", phase != PH_DONE, tokA) }
#else
	:: phase == PH_PRE && greeted[CI(A, 0)] && greeted[CI(A, 1)] && greeted[CI(A, 2)] ->
		/* one step: nothing is decided before the third reading (f + 1 = 3), so their
		   order does not matter, and what comes between them could come before */
		atomic {
#if WMAX > 0
			if
			:: pV = 0
			:: pV = 1
			:: pV = 2
			:: pV = 3
			fi;
			if
			:: pW = 0
			:: pW = 1
			:: pW = 2
			:: pW = 3
			fi;
#endif
			skip
		};
		/* consecutive steps of the one process: nothing comes between them */
		d_step { roundStart(A); phase = PH_AROUND; pN = 0 };
		do
		:: pN < QU -> d_step { execNode(A, pN); readNode(A, pN); pN++; pW = pV }
		:: else -> break
		od;
		skip;
		d_step {
			pV = 31;
			roundEnd(A);
			printf("A's round on nodes 0, 1, 2 (offsets %d %d %d), won: %d, token %d\n", off[0], off[1], off[2], phase != PH_DONE, tokA);
			pV = 0;
			pW = 0;
			pN = 0
		}
#endif
	:: phase == PH_HOLD ->
		/* A's lease ends (its keys expire or are released) */
		d_step {
			printf("A's lease ends\n");
			phase = PH_AFTER;
#if !FENCING
			phase = PH_DONE;
#endif
			k = 0;
			do
			:: k < N -> keyA[k] = 0; k++
			:: else -> break
			od;
			k = 0
		}

	/* ---- B's rounds: its SET goes to every node ---- */
#if B_SPLIT
	:: B_MAY_TRY ->
		d_step { printf("B starts a round\n"); roundStart(B) }
	:: atomic {
			PICK5(B_EXEC);
			if
			:: pW = 0
#if WMAX > 0
			:: pW = 1
			:: pW = 2
			:: pW = 3
#endif
			fi
		};
		d_step {
			printf("B: node %d runs SET (offset %d, A's key %d)\n", pN, off[pN], keyA[pN]);
			execNode(B, pN);
#if !SPLIT_READS
			readNode(B, pN);
#endif
			pN = 0;
			pW = 0
		}
#if SPLIT_READS
	:: atomic { PICK5(B_READ) };
		d_step { printf("B: reply of node %d read\n", pN); readNode(B, pN); pN = 0 }
#endif
	:: ACTIVE && rOn && rWho == B && (END_ANY_TIME || rSettled || ALL_READ) ->
		d_step { pV = 31; roundEnd(B); pV = 0; printf("B's round ends (tokens: A %d, B %d)\n", tokA, tokB) }
#else
	:: B_MAY_TRY ->
		/* the nodes run B's command and their replies are read one after the other,
		   in any order, nothing else between them; the round ends as the early exit
		   lets it (or reads on) */
		atomic {
#if !B_START_ANY
		if
		:: !running[B] -> d_step { bStart() }
		:: else -> skip
		fi;
#endif
		d_step { printf("B starts a round\n"); roundStart(B) };
		do
		:: atomic {
				PICK5(B_EXEC);
				if
				:: pW = 0
#if WMAX > 0
				:: pW = 1
				:: pW = 2
				:: pW = 3
#endif
				fi
			};
			d_step {
				printf("B: node %d runs SET (offset %d, A's key %d), reply read\n", pN, off[pN], keyA[pN]);
				execNode(B, pN);
				readNode(B, pN);
				pN = 0;
				pW = 0
			}
		:: END_ANY_TIME || rSettled || ALL_READ || NO_B_EXEC ->
			d_step { pV = 31; roundEnd(B); pV = 0; printf("B's round ends (tokens: A %d, B %d)\n", tokA, tokB) };
			break
		od
		}
#endif
	/* ---- faults, on faulty nodes ---- */
	:: atomic {
			PICKF(CLOCK_MOVES);
			if
			:: off[pN] != home[pN] -> pV = CORRECTION
			:: pV = 0
			:: pV = 1
			:: pV = 2
#if FINE_STEPS
			:: pV = 3
			:: pV = 4
			:: pV = 5
			:: pV = 6
			:: pV = 7
			:: pV = 8
			:: pV = 9
#endif
			fi
		};
		/* the clock steps by STEP(pV), or is corrected */
		d_step { clockStep(pN); printf("node %d: clock now at %d\n", pN, off[pN]); pN = 0; pV = 0 }
	:: atomic { PICKF(SNAPSHOT) };
		d_step { printf("node %d: snapshot taken\n", pN); snapshot(pN); pN = 0 }
	:: atomic { PICKF(RELOAD) };
		d_step { printf("node %d: DEBUG RELOAD of the snapshot\n", pN); reload(pN); pN = 0 }
	:: atomic {
			PICKF(RESTORE);
			if
			:: pV = 0
			:: pV = 1
			fi
		};
		d_step { printf("node %d: snapshot restored, connections broken: %d\n", pN, pV); restore(pN); pN = 0; pV = 0 }
	:: atomic { PICKF(FLUSH) };
		d_step { printf("node %d: FLUSHALL\n", pN); flush(pN); pN = 0 }
#if DRIFTS > 0
	:: atomic {
			PICK5(DRIFTS_HERE);
			if
			:: off[pN] != HMIN -> pV = HMIN
			:: off[pN] != 0 -> pV = 0
			:: off[pN] != HMAX -> pV = HMAX
			fi
		};
		/* an honest clock moves within its band */
		d_step { printf("node %d: honest clock moves to %d\n", pN, pV); off[pN] = pV; drifts--; dropKeys(pN); pN = 0; pV = 0 }
#endif
#if FENCING
	:: atomic {
			PICK5(RESEEDS);
			if
			:: pV = 0
			:: pV = 1
			:: pV = 2
			:: pV = 3
#if GUARD_RESEED_QUORUM
			:: pV = 4
#endif
			fi
		};
		/* CounterReseed, in the background */
		d_step { printf("node %d: counters re-seeded\n", pN); reseed(pN); pN = 0; pV = 0 }
#endif
	fi;
	d_step { CANON }
	}
	od;
stop:
	skip
}
