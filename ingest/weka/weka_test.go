package weka

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The facts below restate the dashboard's own tests of its corpus loader
// (weka-structure.test.ts, InferenceX-app 7fe6d62) and follow from its
// rules by hand.

func readAll(t *testing.T, r io.Reader, limit int) ([]Row, *Totals) {
	t.Helper()
	wr, err := NewReader(r, limit)
	require.NoError(t, err)
	var rows []Row
	for {
		row, err := wr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		rows = append(rows, row)
	}
	return rows, wr.Totals()
}

func build(t *testing.T, doc string) Structure {
	t.Helper()
	rows, _ := readAll(t, strings.NewReader(strings.ReplaceAll(doc, "\n", " ")), 0) // one line
	require.Len(t, rows, 1)
	return rows[0].Structure
}

func TestStructure(t *testing.T) {
	t.Run("the cached prefix grows as blocks are seen", func(t *testing.T) {
		s := build(t, `{"id":"c1","block_size":64,"requests":[{"type":"n","model":"m","in":128,"out":10,"hash_ids":[1,2]},
			{"type":"n","model":"m","in":192,"out":20,"hash_ids":[1,2,3]}]}`)
		require.Equal(t, [2]float64{0, 128}, [2]float64{s.Nodes[0].Turn.Cached, s.Nodes[0].Turn.Uncached})
		require.Equal(t, [2]float64{128, 64}, [2]float64{s.Nodes[1].Turn.Cached, s.Nodes[1].Turn.Uncached})
		require.Equal(t, ConversationTotals{In: 320, Out: 30, Cached: 128, Uncached: 192, NumTurns: 2}, s.Totals)
	})
	t.Run("a partial last block, no hash ids, a leading run only", func(t *testing.T) {
		s := build(t, `{"id":"c2","block_size":64,"requests":[{"type":"n","in":100,"out":0,"hash_ids":[1,2]},
			{"type":"n","in":100,"out":0,"hash_ids":[1,2]},{"type":"n","in":50.5,"out":5},
			{"type":"n","in":640,"out":1,"hash_ids":[7,1,2]}]}`)
		require.Equal(t, 100.0, s.Nodes[1].Turn.Cached, "clamped to the input")
		require.Equal(t, [3]float64{51, 0, 51}, [3]float64{s.Nodes[2].Turn.In, s.Nodes[2].Turn.Cached, s.Nodes[2].Turn.Uncached},
			"rounded half up; no blocks: all uncached")
		require.Equal(t, 0.0, s.Nodes[3].Turn.Cached, "an unseen first block breaks the run")
	})
	t.Run("subagent groups run from a snapshot of the parent's blocks", func(t *testing.T) {
		data, err := os.ReadFile("testdata/cc-traces-weka-sample.jsonl")
		require.NoError(t, err)
		rows, _ := readAll(t, bytes.NewReader(data), 1)
		s := rows[0].Structure
		require.Equal(t, "c4", rows[0].ConvID)
		require.Equal(t, []string{"main", "sub"}, rows[0].Models)
		require.Equal(t, 2, s.Totals.NumTurns)
		require.Equal(t, 1, s.Totals.NumSubagentGroups)
		g := s.Nodes[1].Group
		require.Equal(t, "Explore", g.Label)
		require.Equal(t, "a1", *g.AgentID)
		require.Equal(t, 1, g.RawIndex)
		require.Equal(t, 1234.0, *g.DurationMs)
		require.Equal(t, 12.5, *g.StartS)
		require.InDelta(t, 13.734, *g.EndS, 1e-9)
		require.Len(t, g.Children, 2)
		require.Equal(t, [2]float64{12.5, 12.5}, [2]float64{*g.Children[0].StartS, *g.Children[0].EndS})
		require.Equal(t, [2]float64{13.1, 13.1}, [2]float64{*g.Children[1].StartS, *g.Children[1].EndS})
		require.Equal(t, [2]int{1, 1}, [2]int{g.Children[1].RawIndex, *g.Children[1].InnerIndex})
		require.Equal(t, 64.0, g.Children[0].Cached, "block 1 from the parent's snapshot")
		require.Equal(t, 128.0, g.Children[1].Cached, "blocks 1 and 5 seen in the group")
		require.Equal(t, 64.0, s.Nodes[2].Turn.Cached, "the group's block 5 is not the parent's")
		require.Equal(t, []int{0, 1, 2, 3}, []int{s.Nodes[0].Turn.TurnIndex, g.Children[0].TurnIndex, g.Children[1].TurnIndex, s.Nodes[2].Turn.TurnIndex})
		// As stored: the dashboard's field names; absent times and models left out.
		b, err := json.Marshal(s.Nodes[2])
		require.NoError(t, err)
		require.JSONEq(t, `{"kind":"turn","turnIndex":3,"rawIndex":2,"model":"main","in":128,"out":1,"cached":64,"uncached":64}`, string(b))
		b, err = json.Marshal(s.Nodes[0])
		require.NoError(t, err)
		require.JSONEq(t, `{"kind":"turn","turnIndex":0,"rawIndex":0,"startS":0,"endS":1,"model":"main","in":64,"out":10,"cached":0,"uncached":64}`, string(b))
	})
	t.Run("relative child times and group ends from the children", func(t *testing.T) {
		s := build(t, `{"id":"c5","requests":[{"type":"subagent","t":100,"requests":[
			{"type":"n","t":2,"api_time":3,"in":1,"out":1},{"type":"n","t":101,"api_time":0.5,"in":1,"out":1}]}]}`)
		g := s.Nodes[0].Group
		require.Equal(t, "Subagent", g.Label)
		require.Equal(t, 102.0, *g.Children[0].StartS, "a time before the group's is relative to it")
		require.Equal(t, 101.0, *g.Children[1].StartS)
		require.Equal(t, 105.0, *g.EndS, "the latest child end")
		require.Equal(t, 64.0, s.BlockSize)
	})
}

func TestDatasetSummaryAndCharts(t *testing.T) {
	data, err := os.ReadFile("testdata/cc-traces-weka-sample.jsonl")
	require.NoError(t, err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(data)
	require.NoError(t, zw.Close())
	rows, tot := readAll(t, &gz, 0)
	require.Len(t, rows, 2, "gzip read; the blank line skipped")
	// By hand: c4 has turns in 64, 128, 128 (children), 128; cached 0, 64,
	// 128, 64; c1 has 128, 192, cached 0, 128: in 768, cached 384.
	s := tot.Summary()
	require.Equal(t, 3, s.Version)
	require.Equal(t, 768.0, s.TotalIn)
	require.Equal(t, 51.0, s.TotalOut)
	require.Equal(t, 384.0, s.TotalCached)
	require.Equal(t, 0.5, s.CachedPct)
	require.Equal(t, [3]int{4, 1, 2}, [3]int{s.MainTurns, s.SubagentGroups, s.SubagentTurns})
	require.Equal(t, 3.0, s.MeanRequestsPerConversation) // 4 and 2
	require.Equal(t, 3.0, s.MedianRequestsPerConversation)
	require.Equal(t, 0.5, s.MeanSubagentsPerTrace)
	require.Equal(t, map[string]int{"main": 2, "sub": 2, "m": 2}, s.ModelMix)
	require.Equal(t, "conversation", *s.HashIDScope)
	c := tot.ChartData()
	require.Equal(t, 6, c.InputTokensPerTurn.Stats.Count)
	require.Len(t, c.InputTokensPerTurn.Bins, 40)
	require.InDelta(t, 64, c.InputTokensPerTurn.Bins[0].X0, 1e-9)
	require.InDelta(t, 192, c.InputTokensPerTurn.Bins[39].X1, 1e-9)
	require.Equal(t, Summary{Count: 2, Min: 2, Max: 2, Mean: 2, Median: 2, P75: 2, P90: 2, P95: 2}, c.TurnsPerConversation.Stats)
	require.Equal(t, 20, len(c.CachedFractionPerTurn.Bins))
	// Uncached input 64, 64, 0, 64, 128, 64: the zero bin first.
	require.Equal(t, 1, c.UncachedInputTokensPerTurn.Bins[0].Count)
	require.Equal(t, c.UncachedInputTokensPerTurn.Bins[1].X0, c.UncachedInputTokensPerTurn.Bins[0].X1)
	require.Zero(t, c.UncachedInputTokensPerTurn.Bins[0].X0)
	require.Len(t, c.UncachedInputTokensPerTurn.Bins, 40)
	// The limit stops after that many conversations.
	rows, tot = readAll(t, bytes.NewReader(data), 1)
	require.Len(t, rows, 1)
	require.Equal(t, 1, tot.Conversations)
}

func TestHistograms(t *testing.T) {
	require.Equal(t, []Bin{{0, 1, 3}}, linearHistogram([]float64{0, 0, 0}, 40))
	require.Equal(t, []Bin{}, linearHistogram(nil, 40))
	require.Equal(t, []Bin{{0, 2, 1}, {2, 4, 2}}, linearHistogram([]float64{1, 2, 4}, 2))
	require.Equal(t, []Bin{{5, 50, 2}}, logHistogram([]float64{5, 5, -1, 0}, 40))
	require.Equal(t, []Bin{{0, 1, 2}}, logHistogramWithZero([]float64{0, 0}, 40))
	require.Equal(t, Summary{}, summarize(nil))
}

func TestBadLines(t *testing.T) {
	for doc, want := range map[string]string{
		"{\"id\":\"a\"}\n[1]\n":                        "line 2: not a JSON object",
		"{\"requests\":[]}\n":                          "line 1: conversation without an id",
		"{\"id\":\"a\",\"id\":\"b\"}\n":                "line 1: ",
		"{\"id\":\"a\",\"requests\":[{\"in\":\"x\"}]}": "line 1: ",
	} {
		wr, err := NewReader(strings.NewReader(doc), 0)
		require.NoError(t, err)
		for err == nil {
			_, err = wr.Next()
		}
		require.ErrorContains(t, err, want, doc)
		require.NotEqual(t, io.EOF, err, doc)
	}
}
