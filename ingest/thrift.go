package ingest

import (
	"errors"
	"fmt"
)

// A Parquet file describes itself in Thrift's compact protocol: the footer
// (the schema, the row groups and their column chunks) and a header before
// every page. The library decodes both trustingly: a list's claimed length
// is allocated before its items are read, and a struct nested in a struct
// is decoded by recursion. thriftReader decodes the same bytes first, under
// budgets, so that the library only ever sees metadata whose cost is known
// (docs/import-formats.md, "Parquet limits").

// Compact protocol wire types.
const (
	tcStop   = 0
	tcTrue   = 1
	tcFalse  = 2
	tcByte   = 3
	tcI16    = 4
	tcI32    = 5
	tcI64    = 6
	tcDouble = 7
	tcBinary = 8
	tcList   = 9
	tcSet    = 10
	tcMap    = 11
	tcStruct = 12
)

// maxThriftNesting bounds structs and containers inside each other. The
// deepest metadata Parquet defines (a column's logical timestamp type,
// its unit, the unit's empty struct) nests seven deep.
const maxThriftNesting = 16

// errThriftShort is metadata that ends in the middle of a value.
var errThriftShort = errors.New("its metadata is cut short")

// thriftReader decodes compact-protocol bytes, counting what it has read
// against a budget of container items shared by everything it decodes.
type thriftReader struct {
	b     []byte
	off   int
	depth int
	items int // list, set and map entries read so far
	// maxItems is the budget for items; 0 means maxThriftItems.
	maxItems int
}

// maxThriftItems bounds the list, set and map entries of one footer, all
// told. A real export's footer holds a few thousand.
const maxThriftItems = 1_000_000

func (r *thriftReader) byte1() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errThriftShort
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *thriftReader) uvarint() (uint64, error) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		c, err := r.byte1()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("a number runs past 10 bytes")
}

// varint reads a zigzag-encoded integer (i16, i32 and i64 alike).
func (r *thriftReader) varint() (int64, error) {
	u, err := r.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

// i32 reads an i32, refusing a value that does not fit one.
func (r *thriftReader) i32() (int32, error) {
	v, err := r.varint()
	if err == nil && int64(int32(v)) != v {
		err = fmt.Errorf("a 32-bit number holds %d", v)
	}
	return int32(v), err
}

// binary reads a string or binary value, without copying it.
func (r *thriftReader) binary() ([]byte, error) {
	n, err := r.uvarint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(r.b)-r.off) {
		return nil, errThriftShort
	}
	b := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return b, nil
}

// count takes n items, each at least per bytes long, from the budget: a
// length the rest of the metadata cannot hold is refused as it is read,
// not when its items run out.
func (r *thriftReader) count(n uint64, per int) error {
	if n > uint64((len(r.b)-r.off)/per) {
		return fmt.Errorf("a list claims %d items in %d bytes", n, len(r.b)-r.off)
	}
	limit := r.maxItems
	if limit == 0 {
		limit = maxThriftItems
	}
	r.items += int(n)
	if r.items > limit {
		return fmt.Errorf("it holds more than %d list items", limit)
	}
	return nil
}

// list reads a list or set header: its length and item type.
func (r *thriftReader) list() (int, byte, error) {
	h, err := r.byte1()
	if err != nil {
		return 0, 0, err
	}
	n, typ := uint64(h>>4), h&0x0f
	if n == 0x0f {
		if n, err = r.uvarint(); err != nil {
			return 0, 0, err
		}
	}
	if err := r.count(n, 1); err != nil {
		return 0, 0, err
	}
	return int(n), typ, nil
}

// enter and leave bracket a struct or container, bounding their nesting.
func (r *thriftReader) enter() error {
	r.depth++
	if r.depth > maxThriftNesting {
		return fmt.Errorf("values nest more than %d deep", maxThriftNesting)
	}
	return nil
}

func (r *thriftReader) leave() { r.depth-- }

// fields reads a struct, calling each with every field's id and wire type;
// each reads the field's value or skips it.
func (r *thriftReader) fields(each func(id int16, typ byte) error) error {
	if err := r.enter(); err != nil {
		return err
	}
	defer r.leave()
	var last int16
	for {
		h, err := r.byte1()
		if err != nil {
			return err
		}
		if h == tcStop {
			return nil
		}
		id, typ := last+int16(h>>4), h&0x0f
		if h>>4 == 0 {
			v, err := r.varint()
			if err != nil {
				return err
			}
			id = int16(v)
		}
		if typ == tcStop || typ > tcStruct {
			return fmt.Errorf("field %d has no type (%d)", id, typ)
		}
		last = id
		if err := each(id, typ); err != nil {
			return err
		}
	}
}

// skip reads a value of wire type typ and drops it.
func (r *thriftReader) skip(typ byte) error {
	switch typ {
	case tcTrue, tcFalse:
		return nil
	case tcByte:
		_, err := r.byte1()
		return err
	case tcI16, tcI32, tcI64:
		_, err := r.uvarint()
		return err
	case tcDouble:
		if len(r.b)-r.off < 8 {
			return errThriftShort
		}
		r.off += 8
		return nil
	case tcBinary:
		_, err := r.binary()
		return err
	case tcList, tcSet:
		n, item, err := r.list()
		if err != nil {
			return err
		}
		return r.skipItems(n, item, 0)
	case tcMap:
		n, err := r.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := r.byte1()
		if err != nil {
			return err
		}
		if kv>>4 == 0 || kv&0x0f == 0 {
			return fmt.Errorf("a map's entries have no type (%#x)", kv)
		}
		if err := r.count(n, 2); err != nil {
			return err
		}
		return r.skipItems(int(n), kv>>4, kv&0x0f)
	case tcStruct:
		return r.fields(func(_ int16, typ byte) error { return r.skip(typ) })
	}
	return fmt.Errorf("unknown value type %d", typ)
}

// skipItems skips n container items of type typ (and, for a map, their
// values of type val; 0 for a list).
func (r *thriftReader) skipItems(n int, typ, val byte) error {
	if err := r.enter(); err != nil {
		return err
	}
	defer r.leave()
	types := []byte{typ, val}
	if val == 0 {
		types = types[:1]
	}
	for _, t := range types {
		if t == tcStop || t > tcStruct {
			return fmt.Errorf("a list's items have no type (%d)", t)
		}
	}
	for range n {
		for _, t := range types {
			var err error
			if t == tcTrue || t == tcFalse {
				_, err = r.byte1() // a boolean item is a byte of its own
			} else {
				err = r.skip(t)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// count32 reads field id of what, of wire type typ, as an i32 that counts
// something: refusing another wire type or a negative count.
func (r *thriftReader) count32(what string, id int16, typ byte) (int32, error) {
	if err := want(what, id, typ, tcI32); err != nil {
		return 0, err
	}
	v, err := r.i32()
	if err == nil && v < 0 {
		err = fmt.Errorf("%s field %d is %d", what, id, v)
	}
	return v, err
}

// want checks a field's wire type.
func want(what string, id int16, typ, wantTyp byte) error {
	if typ != wantTyp {
		return fmt.Errorf("%s field %d has wire type %d, not %d", what, id, typ, wantTyp)
	}
	return nil
}
