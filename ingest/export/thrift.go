package export

import (
	"context"

	"github.com/apache/thrift/lib/go/thrift"
)

// thriftOut writes Thrift's compact protocol, in which Parquet encodes its
// page headers and file footer. Errors are sticky: the first one stops
// every later write and is returned by bytes.
type thriftOut struct {
	ctx context.Context
	buf *thrift.TMemoryBuffer
	p   *thrift.TCompactProtocol
	err error
}

func newThriftOut(ctx context.Context) *thriftOut {
	buf := thrift.NewTMemoryBuffer()
	return &thriftOut{ctx: ctx, buf: buf, p: thrift.NewTCompactProtocolConf(buf, &thrift.TConfiguration{})}
}

func (t *thriftOut) do(f func() error) {
	if t.err == nil {
		t.err = f()
	}
}

// begin opens a struct; end closes it (the field stop and the struct).
func (t *thriftOut) begin() { t.do(func() error { return t.p.WriteStructBegin(t.ctx, "") }) }

func (t *thriftOut) end() {
	t.do(func() error { return t.p.WriteFieldStop(t.ctx) })
	t.do(func() error { return t.p.WriteStructEnd(t.ctx) })
}

func (t *thriftOut) field(id int16, typ thrift.TType) {
	t.do(func() error { return t.p.WriteFieldBegin(t.ctx, "", typ, id) })
}

func (t *thriftOut) i32(id int16, v int32) {
	t.field(id, thrift.I32)
	t.do(func() error { return t.p.WriteI32(t.ctx, v) })
}

func (t *thriftOut) i64(id int16, v int64) {
	t.field(id, thrift.I64)
	t.do(func() error { return t.p.WriteI64(t.ctx, v) })
}

func (t *thriftOut) byte(id int16, v int8) {
	t.field(id, thrift.BYTE)
	t.do(func() error { return t.p.WriteByte(t.ctx, v) })
}

func (t *thriftOut) bool(id int16, v bool) {
	t.field(id, thrift.BOOL)
	t.do(func() error { return t.p.WriteBool(t.ctx, v) })
}

func (t *thriftOut) str(id int16, v string) {
	t.field(id, thrift.STRING)
	t.do(func() error { return t.p.WriteString(t.ctx, v) })
}

// strct opens a struct-valued field; close it with end.
func (t *thriftOut) strct(id int16) {
	t.field(id, thrift.STRUCT)
	t.begin()
}

// list opens a list-valued field of n elements: write them right after.
func (t *thriftOut) list(id int16, elem thrift.TType, n int) {
	t.field(id, thrift.LIST)
	t.do(func() error { return t.p.WriteListBegin(t.ctx, elem, n) })
}

func (t *thriftOut) i32Elem(v int32)  { t.do(func() error { return t.p.WriteI32(t.ctx, v) }) }
func (t *thriftOut) strElem(v string) { t.do(func() error { return t.p.WriteString(t.ctx, v) }) }
func (t *thriftOut) bytes() ([]byte, error) {
	t.do(func() error { return t.p.Flush(t.ctx) })
	return t.buf.Bytes(), t.err
}
