package ingest

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// Before the Parquet library sees a file, its footer and every page header
// are decoded here under budgets (docs/import-formats.md, "Parquet
// limits"). The library builds its schema with work and memory that grow
// with the square of the schema's depth, allocates the lengths lists claim
// before reading their items, and walks column chunks wherever the footer
// says they lie; a footer that passes these checks costs it at most a few
// times the budgets below.
const (
	// maxParquetFooter bounds the footer: a real export's is a few hundred
	// kilobytes.
	maxParquetFooter = 32 << 20
	// maxParquetSchema bounds the schema's elements: columns and the
	// groups holding them (CUR 2.0 has about 130).
	maxParquetSchema = 10_000
	// maxParquetDepth bounds groups inside groups (a map column is three
	// deep, a list of structs four).
	maxParquetDepth = 32
	// maxParquetChunks bounds column chunks, one per column per row group.
	maxParquetChunks = 100_000
	// maxParquetPage bounds the size a page may claim once decompressed.
	// The library allocates what a page header claims before it
	// decompresses the page; real exports write pages of a megabyte or so.
	maxParquetPage = 64 << 20
	// maxParquetPageValues bounds the values a page may claim: the library
	// allocates a few bytes per claimed value to decode it.
	maxParquetPageValues = 1 << 23
	// maxPageHeader bounds one page header (real ones are tens of bytes,
	// or a few hundred with statistics).
	maxPageHeader = 64 << 10
)

// pqFooter is what the checks need of a Parquet footer.
type pqFooter struct {
	leaves int
	depth  int
	groups []int     // column chunks per row group
	chunks []pqChunk // in the footer's order: row group by row group
}

// pqChunk is one column chunk: the bytes its pages fill, as the library
// reads them.
type pqChunk struct {
	group      int // 1-based
	path       string
	start, end int64
	data       int64 // its first data page
}

// pqElement is a schema element: a column (leaf) or a group.
type pqElement struct {
	leaf     bool
	children int32
}

// readParquetFooter reads and checks the footer of the Parquet file ra of
// size bytes: its length, its Thrift metadata under the budgets above, the
// schema's shape, and that column chunks lie in the file in order, none
// overlapping another. Errors say what is wrong, for ErrCorruptParquet.
func readParquetFooter(ra io.ReaderAt, size int64) (*pqFooter, error) {
	if size < 12 {
		return nil, fmt.Errorf("%d bytes is too short for a Parquet file", size)
	}
	var tail [8]byte
	if _, err := ra.ReadAt(tail[:], size-8); err != nil {
		return nil, fmt.Errorf("cannot read its footer: %v", err)
	}
	if string(tail[4:]) != parquetMagic {
		return nil, fmt.Errorf("it does not end with the Parquet magic number; the file is cut short or not Parquet")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 || n > maxParquetFooter {
		return nil, fmt.Errorf("its footer claims %d bytes of a %d-byte file", n, size)
	}
	b := make([]byte, n)
	if _, err := ra.ReadAt(b, size-8-n); err != nil {
		return nil, fmt.Errorf("cannot read its footer: %v", err)
	}
	f, err := decodeFooter(b)
	if err != nil {
		return nil, err
	}
	if err := f.checkChunks(size - 8 - n); err != nil {
		return nil, err
	}
	return f, nil
}

// decodeFooter decodes FileMetaData: the schema (field 2) and the row
// groups (field 4); everything else is skipped under the same budgets.
func decodeFooter(b []byte) (*pqFooter, error) {
	r := &thriftReader{b: b}
	f := &pqFooter{}
	var schema []pqElement
	err := r.fields(func(id int16, typ byte) error {
		switch id {
		case 2:
			n, err := r.structList("the schema", id, typ)
			if err != nil {
				return err
			}
			if len(schema)+n > maxParquetSchema {
				return fmt.Errorf("the schema has %d elements; at most %d are read", len(schema)+n, maxParquetSchema)
			}
			for range n {
				e, err := r.schemaElement()
				if err != nil {
					return err
				}
				schema = append(schema, e)
			}
			return nil
		case 4:
			n, err := r.structList("the row groups", id, typ)
			if err != nil {
				return err
			}
			for range n {
				if err := r.rowGroup(f); err != nil {
					return err
				}
			}
			return nil
		}
		return r.skip(typ)
	})
	if err != nil {
		return nil, err
	}
	if r.off != len(b) {
		return nil, fmt.Errorf("%d bytes follow the metadata", len(b)-r.off)
	}
	if f.leaves, f.depth, err = schemaShape(schema); err != nil {
		return nil, err
	}
	return f, nil
}

// structList reads the header of a list of structs.
func (r *thriftReader) structList(what string, id int16, typ byte) (int, error) {
	if err := want(what, id, typ, tcList); err != nil {
		return 0, err
	}
	n, item, err := r.list()
	if err == nil && item != tcStruct {
		err = fmt.Errorf("%s are not structs (type %d)", what, item)
	}
	return n, err
}

// schemaElement reads a SchemaElement: a column has a type (field 1), a
// group its number of children (field 5).
func (r *thriftReader) schemaElement() (pqElement, error) {
	var e pqElement
	err := r.fields(func(id int16, typ byte) error {
		switch id {
		case 1:
			e.leaf = true
		case 5:
			n, err := r.count32("a schema element", id, typ)
			e.children = n
			return err
		}
		return r.skip(typ)
	})
	return e, err
}

// schemaShape checks that the schema is one tree, depth first, and
// returns its leaf columns and depth.
func schemaShape(schema []pqElement) (leaves, depth int, err error) {
	if len(schema) == 0 || schema[0].leaf {
		return 0, 0, fmt.Errorf("it has no schema")
	}
	var open []int32 // children still to come, per group being read
	for i, e := range schema {
		if i > 0 {
			if len(open) == 0 {
				return 0, 0, fmt.Errorf("the schema has %d elements outside its root", len(schema)-i)
			}
			open[len(open)-1]--
		}
		if len(open) > maxParquetDepth {
			return 0, 0, fmt.Errorf("its schema nests groups more than %d deep", maxParquetDepth)
		}
		depth = max(depth, len(open))
		switch {
		case e.leaf && e.children > 0:
			return 0, 0, fmt.Errorf("schema element %d is a column with children", i+1)
		case e.leaf:
			leaves++
		case e.children > 0:
			if int(e.children) > len(schema)-i-1 {
				return 0, 0, fmt.Errorf("schema element %d claims %d children; %d elements follow it", i+1, e.children, len(schema)-i-1)
			}
			open = append(open, e.children)
		}
		for len(open) > 0 && open[len(open)-1] == 0 {
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		return 0, 0, fmt.Errorf("the schema ends before its groups do")
	}
	if leaves == 0 {
		return 0, 0, fmt.Errorf("its schema has no columns")
	}
	return leaves, depth, nil
}

// rowGroup reads a RowGroup's column chunks (field 1).
func (r *thriftReader) rowGroup(f *pqFooter) error {
	f.groups = append(f.groups, 0)
	group := len(f.groups)
	return r.fields(func(id int16, typ byte) error {
		if id != 1 {
			return r.skip(typ)
		}
		n, err := r.structList("a row group's columns", id, typ)
		if err != nil {
			return err
		}
		if len(f.chunks)+n > maxParquetChunks {
			return fmt.Errorf("it has more than %d column chunks (columns × row groups)", maxParquetChunks)
		}
		for range n {
			c, err := r.columnChunk()
			if err != nil {
				return err
			}
			c.group = group
			f.chunks = append(f.chunks, c)
			f.groups[group-1]++
		}
		return nil
	})
}

// columnChunk reads a ColumnChunk's metadata (field 3): where its pages
// are and which column they hold.
func (r *thriftReader) columnChunk() (pqChunk, error) {
	var c pqChunk
	var dict, total int64
	c.data = -1
	err := r.fields(func(id int16, typ byte) error {
		if id != 3 {
			return r.skip(typ)
		}
		if err := want("a column chunk", id, typ, tcStruct); err != nil {
			return err
		}
		return r.fields(func(id int16, typ byte) error {
			var dst *int64
			switch id {
			case 3: // path_in_schema
				if err := want("a column's metadata", id, typ, tcList); err != nil {
					return err
				}
				n, item, err := r.list()
				if err != nil {
					return err
				}
				if item != tcBinary {
					return fmt.Errorf("a column's path is not text")
				}
				parts := make([]string, 0, min(n, maxParquetDepth+1))
				for range n {
					p, err := r.binary()
					if err != nil {
						return err
					}
					if len(parts) <= maxParquetDepth {
						parts = append(parts, string(p))
					}
				}
				c.path = strings.Join(parts, ".")
				return nil
			case 7: // total_compressed_size
				dst = &total
			case 9: // data_page_offset
				dst = &c.data
			case 11: // dictionary_page_offset
				dst = &dict
			default:
				return r.skip(typ)
			}
			if err := want("a column's metadata", id, typ, tcI64); err != nil {
				return err
			}
			v, err := r.varint()
			*dst = v
			return err
		})
	})
	if err != nil {
		return c, err
	}
	if c.data < 0 || dict < 0 || total < 0 {
		return c, fmt.Errorf("column %q: its pages lie outside the file", c.path)
	}
	// As the library reads a chunk: from its dictionary page when it has
	// one, else from its first data page, for its compressed size.
	c.start = c.data
	if dict != 0 {
		c.start = dict
	}
	c.end = c.start + total
	return c, nil
}

// checkChunks checks that every row group has a chunk per column, and
// that the chunks lie between the file's magic number and dataEnd, in
// order, none overlapping another: reading them reads each byte of the
// file once at most.
func (f *pqFooter) checkChunks(dataEnd int64) error {
	for g, n := range f.groups {
		if n != f.leaves {
			return fmt.Errorf("row group %d has %d column chunks for %d columns", g+1, n, f.leaves)
		}
	}
	prev := len64(parquetMagic)
	for _, c := range f.chunks {
		if c.start < len64(parquetMagic) || c.end < c.start || c.end > dataEnd || c.data < c.start || c.data > c.end {
			return fmt.Errorf("row group %d, column %q: its pages lie outside the file", c.group, c.path)
		}
		if c.start < prev {
			return fmt.Errorf("row group %d, column %q: its pages overlap another column's or come before them", c.group, c.path)
		}
		prev = c.end
	}
	return nil
}

func len64(s string) int64 { return int64(len(s)) }

// checkPages reads every page header of every column chunk (not the
// pages) and refuses a page that runs past its chunk, or whose header is
// unreadable or claims more than maxParquetPage bytes or
// maxParquetPageValues values, before any page is decoded. The chunks do
// not overlap, so this reads each page header once; it stops when ctx
// ends.
func checkPages(ctx context.Context, ra io.ReaderAt, f *pqFooter) error {
	buf := make([]byte, maxPageHeader)
	pages := 0
	for _, c := range f.chunks {
		for off := c.start; off < c.end; {
			if pages++; pages%1024 == 0 && ctx.Err() != nil {
				return context.Cause(ctx)
			}
			n, err := ra.ReadAt(buf[:min(int64(len(buf)), c.end-off)], off)
			if n == 0 {
				return fmt.Errorf("row group %d, column %q: cannot read a page header: %v", c.group, c.path, err)
			}
			h, err := decodePageHeader(buf[:n])
			if err != nil {
				return fmt.Errorf("row group %d, column %q: unreadable page header: %w", c.group, c.path, err)
			}
			if h.uncompressed > maxParquetPage {
				return fmt.Errorf("row group %d, column %q: a page claims %d bytes (at most %d are read)", c.group, c.path, h.uncompressed, maxParquetPage)
			}
			if h.values > maxParquetPageValues {
				return fmt.Errorf("row group %d, column %q: a page claims %d values (at most %d are read)", c.group, c.path, h.values, maxParquetPageValues)
			}
			off += int64(h.size) + int64(h.compressed)
			if off > c.end {
				return fmt.Errorf("row group %d, column %q: a page runs past the end of its column chunk", c.group, c.path)
			}
		}
	}
	return nil
}

// pageHeader is what checkPages needs of a PageHeader.
type pageHeader struct {
	size                     int // of the header itself
	uncompressed, compressed int32
	values                   int32
}

// decodePageHeader decodes the PageHeader at the start of b: its sizes
// (fields 2 and 3) and the values its data page, dictionary page or data
// page v2 header claims (fields 5, 7, 8; a v2 header also its nulls, rows
// and the bytes of its levels).
func decodePageHeader(b []byte) (pageHeader, error) {
	r := &thriftReader{b: b, maxItems: len(b)}
	var h pageHeader
	var sizes int
	var nulls, rows, levels int64
	err := r.fields(func(id int16, typ byte) error {
		switch id {
		case 2, 3:
			v, err := r.count32("a page header", id, typ)
			if err != nil {
				return err
			}
			if id == 2 {
				h.uncompressed = v
			} else {
				h.compressed = v
			}
			sizes++
			return nil
		case 5, 7, 8:
			if err := want("a page header", id, typ, tcStruct); err != nil {
				return err
			}
			return r.fields(func(sub int16, typ byte) error {
				if sub != 1 && (id != 8 || (sub != 2 && sub != 3 && sub != 5 && sub != 6)) {
					return r.skip(typ)
				}
				v, err := r.count32(fmt.Sprintf("a page header's field %d", id), sub, typ)
				if err != nil {
					return err
				}
				switch sub {
				case 1:
					h.values = max(h.values, v)
				case 2:
					nulls = int64(v)
				case 3:
					rows = int64(v)
				default:
					levels += int64(v)
				}
				return nil
			})
		}
		return r.skip(typ)
	})
	switch {
	case err != nil:
	case sizes < 2:
		err = fmt.Errorf("a page header lacks its sizes")
	case nulls > int64(h.values) || rows > int64(h.values):
		err = fmt.Errorf("a page claims more nulls or rows (%d, %d) than values (%d)", nulls, rows, h.values)
	case levels > int64(h.compressed):
		err = fmt.Errorf("a page's levels claim %d of its %d bytes", levels, h.compressed)
	}
	h.size = r.off
	return h, err
}
