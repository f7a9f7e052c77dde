package store

import (
	"context"

	"github.com/inferencex/ingest/schema"
)

// adoptedPoint is what finds a point of ours among the rows an adopt took
// over from the reference ingest (their ingest the adopt's ledger row,
// target 'adopted'; a rerun gives them its provenance): the point's
// key without what the reference stored otherwise. It kept no recipe
// fingerprint before its migration 012 (the column is NULL on such rows),
// and it counted a config's GPUs as tp × ep where we count the physical
// devices (ingest/benchmark/topology.go), so neither may decide whether a
// point is one the reference had stored.
type adoptedPoint struct {
	hardware, framework, model, precision, specMethod string
	disagg, multinode                                 bool
	prefillTP, prefillEP                              int16
	prefillDPA                                        bool
	prefillWorkers, decodeTP, decodeEP                int16
	decodeDPA                                         bool
	decodeWorkers                                     int16
	benchmarkType, offloadMode                        string
	isl, osl                                          int32
	islSet, oslSet                                    bool
	conc                                              int32
	// fingerprint is the row's recipe fingerprint, "" when NULL.
	fingerprint string
}

func adoptedPointOf(p *schema.BenchmarkPoint, fingerprint *string) adoptedPoint {
	c := p.Config
	k := adoptedPoint{hardware: c.Hardware, framework: c.Framework, model: c.Model, precision: c.Precision,
		specMethod: c.SpecMethod, disagg: c.Disagg, multinode: c.IsMultinode,
		prefillTP: int16(c.PrefillTP), prefillEP: int16(c.PrefillEP), prefillDPA: c.PrefillDPAttention,
		prefillWorkers: int16(c.PrefillNumWorkers), decodeTP: int16(c.DecodeTP), decodeEP: int16(c.DecodeEP),
		decodeDPA: c.DecodeDPAttention, decodeWorkers: int16(c.DecodeNumWorkers),
		benchmarkType: p.BenchmarkType, offloadMode: p.OffloadMode, conc: int32(p.Conc)}
	if p.ISL != nil {
		k.isl, k.islSet = int32(*p.ISL), true
	}
	if p.OSL != nil {
		k.osl, k.oslSet = int32(*p.OSL), true
	}
	if fingerprint != nil {
		k.fingerprint = *fingerprint
	}
	return k
}

// adoptedPoints maps the adopted rows of a run to their content digests.
// A key two adopted rows share (they differ in their GPU counts only) maps
// to none: such a point is not recognised, and is written as any new one.
type adoptedPoints map[adoptedPoint]*digest

// match gives the digest of the adopted row that stands for p: the one of
// p's fingerprint, else the one without a fingerprint.
func (a adoptedPoints) match(p *schema.BenchmarkPoint, fingerprint *string) (digest, bool) {
	if len(a) == 0 {
		return digest{}, false
	}
	k := adoptedPointOf(p, fingerprint)
	d, ok := a[k]
	if !ok && k.fingerprint != "" {
		k.fingerprint = ""
		d, ok = a[k]
	}
	if !ok || d == nil {
		return digest{}, false
	}
	return *d, true
}

// loadAdoptedPoints reads the adopted rows of the run attempt.
func (t *RunTx) loadAdoptedPoints(ctx context.Context) (adoptedPoints, error) {
	rows, err := t.tx.Query(ctx, qAdoptedPoints, t.start.Run.SourceRunID, t.start.Run.SourceRunAttempt)
	if err != nil {
		return nil, t.explain("read adopted rows", err)
	}
	defer rows.Close()
	out := adoptedPoints{}
	for rows.Next() {
		var (
			p           schema.BenchmarkPoint
			c           = &p.Config
			fingerprint *string
			d           []byte
			isl, osl    *int32
			conc        int32
			pTP, pEP    int16
			pW, dTP     int16
			dEP, dW     int16
		)
		if err := rows.Scan(&d, &c.Hardware, &c.Framework, &c.Model, &c.Precision, &c.SpecMethod, &c.Disagg, &c.IsMultinode,
			&pTP, &pEP, &c.PrefillDPAttention, &pW, &dTP, &dEP, &c.DecodeDPAttention, &dW,
			&p.BenchmarkType, &isl, &osl, &conc, &p.OffloadMode, &fingerprint); err != nil {
			return nil, t.explain("read adopted rows", err)
		}
		c.PrefillTP, c.PrefillEP, c.PrefillNumWorkers = int(pTP), int(pEP), int(pW)
		c.DecodeTP, c.DecodeEP, c.DecodeNumWorkers = int(dTP), int(dEP), int(dW)
		if isl != nil {
			v := int(*isl)
			p.ISL = &v
		}
		if osl != nil {
			v := int(*osl)
			p.OSL = &v
		}
		p.Conc = int(conc)
		k := adoptedPointOf(&p, fingerprint)
		if _, twice := out[k]; twice {
			out[k] = nil
			continue
		}
		var v digest
		copy(v[:], d)
		out[k] = &v
	}
	if err := rows.Err(); err != nil {
		return nil, t.explain("read adopted rows", err)
	}
	return out, nil
}
