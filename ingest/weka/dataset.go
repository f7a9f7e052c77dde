package weka

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/inferencex/ingest/ingest/strictjson"
)

// maxLine bounds one conversation (the corpus rows are a few MB each).
const maxLine = 256 << 20

// Row is one conversation as the dataset_conversations table holds it.
type Row struct {
	ConvID    string
	Models    []string
	Structure Structure
}

// Totals of the dataset over every conversation read, what its summary
// and chart data are computed from.
type Totals struct {
	inputPerTurn, uncachedInputPerTurn, outputPerTurn, cachedFractionPerTurn []float64
	turnsPerConv, requestsPerConv                                            []float64
	subagentInputPerRequest, subagentOutputPerRequest                        []float64
	subagentGroupsPerConv, subagentTurnsPerGroup                             []float64
	totalIn, totalOut, totalCached                                           float64
	mainTurns, subagentGroups, subagentTurns                                 int
	modelCounts                                                              map[string]int
	blockSize                                                                float64
	hashIDScope                                                              *string
	// Conversations is how many were read.
	Conversations int
}

func (t *Totals) turn(n *Turn) {
	t.inputPerTurn = append(t.inputPerTurn, n.In)
	t.uncachedInputPerTurn = append(t.uncachedInputPerTurn, n.Uncached)
	t.outputPerTurn = append(t.outputPerTurn, n.Out)
	if n.In > 0 {
		t.cachedFractionPerTurn = append(t.cachedFractionPerTurn, n.Cached/n.In)
	}
	if n.Model != nil && *n.Model != "" {
		t.modelCounts[*n.Model]++
	}
}

func (t *Totals) add(c *Conversation, s *Structure) {
	t.Conversations++
	if c.BlockSize != nil {
		t.blockSize = *c.BlockSize
	}
	if c.HashIDScope != nil {
		t.hashIDScope = c.HashIDScope
	}
	t.totalIn += s.Totals.In
	t.totalOut += s.Totals.Out
	t.totalCached += s.Totals.Cached
	t.mainTurns += s.Totals.NumTurns
	t.subagentGroups += s.Totals.NumSubagentGroups
	t.turnsPerConv = append(t.turnsPerConv, float64(s.Totals.NumTurns))
	requests := s.Totals.NumTurns
	for _, n := range s.Nodes {
		if n.Group != nil {
			requests += len(n.Group.Children)
			for i := range n.Group.Children {
				t.subagentInputPerRequest = append(t.subagentInputPerRequest, n.Group.Children[i].In)
				t.subagentOutputPerRequest = append(t.subagentOutputPerRequest, n.Group.Children[i].Out)
			}
		}
	}
	t.requestsPerConv = append(t.requestsPerConv, float64(requests))
	t.subagentGroupsPerConv = append(t.subagentGroupsPerConv, float64(s.Totals.NumSubagentGroups))
	for _, n := range s.Nodes {
		if n.Turn != nil {
			t.turn(n.Turn)
			continue
		}
		t.subagentTurnsPerGroup = append(t.subagentTurnsPerGroup, float64(len(n.Group.Children)))
		t.subagentTurns += len(n.Group.Children)
		for i := range n.Group.Children {
			t.turn(&n.Group.Children[i])
		}
	}
}

// DatasetSummary is datasets.summary, version 3.
type DatasetSummary struct {
	Version                       int            `json:"version"`
	BlockSize                     float64        `json:"blockSize"`
	HashIDScope                   *string        `json:"hashIdScope"`
	TotalIn                       float64        `json:"totalIn"`
	TotalOut                      float64        `json:"totalOut"`
	TotalCached                   float64        `json:"totalCached"`
	CachedPct                     float64        `json:"cachedPct"`
	MainTurns                     int            `json:"mainTurns"`
	SubagentGroups                int            `json:"subagentGroups"`
	SubagentTurns                 int            `json:"subagentTurns"`
	MeanRequestsPerConversation   float64        `json:"meanRequestsPerConversation"`
	MedianRequestsPerConversation float64        `json:"medianRequestsPerConversation"`
	MeanSubagentsPerTrace         float64        `json:"meanSubagentsPerTrace"`
	MedianSubagentsPerTrace       float64        `json:"medianSubagentsPerTrace"`
	ModelMix                      map[string]int `json:"modelMix"`
}

// Summary is the dataset's summary.
func (t *Totals) Summary() DatasetSummary {
	s := DatasetSummary{Version: 3, BlockSize: t.blockSize, HashIDScope: t.hashIDScope, TotalIn: t.totalIn, TotalOut: t.totalOut,
		TotalCached: t.totalCached, MainTurns: t.mainTurns, SubagentGroups: t.subagentGroups, SubagentTurns: t.subagentTurns,
		ModelMix: t.modelCounts}
	if t.totalIn > 0 {
		s.CachedPct = t.totalCached / t.totalIn
	}
	r, g := summarize(t.requestsPerConv), summarize(t.subagentGroupsPerConv)
	s.MeanRequestsPerConversation, s.MedianRequestsPerConversation = r.Mean, r.Median
	s.MeanSubagentsPerTrace, s.MedianSubagentsPerTrace = g.Mean, g.Median
	return s
}

// Distribution is one card of the dataset page: a histogram and a summary.
type Distribution struct {
	Bins  []Bin   `json:"bins"`
	Stats Summary `json:"stats"`
}

// ChartData is datasets.chart_data, version 3.
type ChartData struct {
	Version                        int          `json:"version"`
	InputTokensPerTurn             Distribution `json:"inputTokensPerTurn"`
	UncachedInputTokensPerTurn     Distribution `json:"uncachedInputTokensPerTurn"`
	OutputTokensPerTurn            Distribution `json:"outputTokensPerTurn"`
	SubagentInputTokensPerRequest  Distribution `json:"subagentInputTokensPerRequest"`
	SubagentOutputTokensPerRequest Distribution `json:"subagentOutputTokensPerRequest"`
	TurnsPerConversation           Distribution `json:"turnsPerConversation"`
	SubagentGroupsPerConversation  Distribution `json:"subagentGroupsPerConversation"`
	CachedFractionPerTurn          Distribution `json:"cachedFractionPerTurn"`
}

// ChartData is the dataset's chart data: 40 bins (log10 for token counts,
// a zero bin first for the uncached input; linear for counts per
// conversation), 20 linear bins for the cached fraction.
func (t *Totals) ChartData() ChartData {
	d := func(bins func([]float64, int) []Bin, v []float64, n int) Distribution {
		return Distribution{Bins: bins(v, n), Stats: summarize(v)}
	}
	return ChartData{Version: 3,
		InputTokensPerTurn:             d(logHistogram, t.inputPerTurn, 40),
		UncachedInputTokensPerTurn:     d(logHistogramWithZero, t.uncachedInputPerTurn, 40),
		OutputTokensPerTurn:            d(logHistogram, t.outputPerTurn, 40),
		SubagentInputTokensPerRequest:  d(logHistogram, t.subagentInputPerRequest, 40),
		SubagentOutputTokensPerRequest: d(logHistogram, t.subagentOutputPerRequest, 40),
		TurnsPerConversation:           d(linearHistogram, t.turnsPerConv, 40),
		SubagentGroupsPerConversation:  d(linearHistogram, t.subagentGroupsPerConv, 40),
		CachedFractionPerTurn:          d(linearHistogram, t.cachedFractionPerTurn, 20),
	}
}

// Reader reads a corpus file: JSON Lines, one conversation object per
// line (the row the Hugging Face datasets server returns for it), gzip
// or not. Blank lines are skipped; at most limit conversations are read
// when limit > 0.
type Reader struct {
	br     *bufio.Reader
	chk    strictjson.Checker
	line   int
	limit  int
	totals *Totals
	long   []byte
}

// NewReader reads r, gunzipping it when it starts with the gzip magic.
func NewReader(r io.Reader, limit int) (*Reader, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		br = bufio.NewReaderSize(zr, 1<<20)
	}
	return &Reader{br: br, limit: limit, totals: &Totals{modelCounts: map[string]int{}, blockSize: DefaultBlockSize}}, nil
}

// Totals are the totals of the conversations read so far.
func (r *Reader) Totals() *Totals { return r.totals }

// Next is the next conversation; io.EOF after the last. An error names
// the line.
func (r *Reader) Next() (Row, error) {
	for {
		if r.limit > 0 && r.totals.Conversations >= r.limit {
			return Row{}, io.EOF
		}
		line, err := r.readLine()
		if len(bytes.TrimSpace(line)) > 0 {
			row, perr := r.parse(bytes.TrimSpace(line))
			if perr != nil {
				return Row{}, fmt.Errorf("line %d: %w", r.line, perr)
			}
			return row, nil
		}
		if err != nil {
			return Row{}, err
		}
	}
}

func (r *Reader) readLine() ([]byte, error) {
	r.line++
	line, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.long = append(r.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.br.ReadSlice('\n')
			r.long = append(r.long, line...)
			if len(r.long) > maxLine {
				return nil, fmt.Errorf("line %d: longer than %d bytes", r.line, maxLine)
			}
		}
		line = r.long
	}
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("line %d: %w", r.line, err)
	}
	return line, err
}

func (r *Reader) parse(line []byte) (Row, error) {
	if line[0] != '{' {
		return Row{}, errors.New("not a JSON object")
	}
	if err := r.chk.Check(line); err != nil {
		return Row{}, err
	}
	var c Conversation
	if err := json.Unmarshal(line, &c); err != nil {
		return Row{}, err
	}
	if c.ID == nil || *c.ID == "" {
		return Row{}, errors.New("conversation without an id")
	}
	s := c.Build()
	r.totals.add(&c, &s)
	models := c.Models
	if models == nil {
		models = []string{}
	}
	return Row{ConvID: *c.ID, Models: models, Structure: s}, nil
}
