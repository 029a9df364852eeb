package connect

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/jsonlimit"
)

// maxManifestBytes bounds a manifest: a CUR manifest lists its columns and
// a few files.
const maxManifestBytes = 4 << 20

// s3Export reads AWS billing exports from a bucket: legacy Cost and Usage
// Reports and Data Exports (CUR 2.0, FOCUS), as AWS lays them out, each
// billing period under a manifest that names its current version's files.
//
//	legacy CUR:   PREFIX/yyyymmdd-yyyymmdd/NAME-Manifest.json (assemblyId, reportKeys)
//	Data Exports: PREFIX/metadata/BILLING_PERIOD=YYYY-MM/NAME-Manifest.json (executionId, dataFiles)
//
// PREFIX is the export's prefix and name together (my-prefix/my-report).
// A period whose manifest is unchanged since the last import (same ETag
// and version id) is skipped; a new version is imported as one file, its
// parts joined, and replaces the period's earlier rows (cloud exports are
// restated per billing period, docs/import-formats.md). The files may be
// CSV, gzipped or not, or Parquet (joinParts).
type s3Export struct{}

var (
	legacyPeriod = regexp.MustCompile(`^(\d{8}-\d{8})/[^/]+-Manifest\.json$`)
	exportPeriod = regexp.MustCompile(`^metadata/(BILLING_PERIOD=\d{4}-\d{2})/[^/]+-Manifest\.json$`)
)

// s3Manifest is the fields of both manifests that matter here.
type s3Manifest struct {
	// Legacy CUR.
	AssemblyID string   `json:"assemblyId"`
	ReportKeys []string `json:"reportKeys"`
	Bucket     string   `json:"bucket"`
	// Data Exports.
	ExecutionID string   `json:"executionId"`
	DataFiles   []string `json:"dataFiles"`
}

// s3Client is what a sync needs of the SDK's client.
type s3Client interface {
	ListObjectsV2(context.Context, *s3.ListObjectsV2Input, ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

func (s3Export) client(ctx context.Context, s *Service, p pull) (s3Client, error) {
	region := p.set.Region
	if region == "" {
		region = "us-east-1"
	}
	// Each call's answer must start within CallTimeout; a data file then
	// streams for as long as its import takes (bounded by the job's).
	// The bucket's endpoint is the tenant's to aim: dialled through the
	// egress policy (policy.go).
	hc := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		guarded := s.transport()
		tr.Proxy, tr.DialContext = guarded.Proxy, guarded.DialContext
		tr.TLSHandshakeTimeout, tr.ResponseHeaderTimeout = guarded.TLSHandshakeTimeout, guarded.ResponseHeaderTimeout
	})
	opts := []func(*config.LoadOptions) error{config.WithRegion(region)}
	switch {
	case p.cred.AccessKeyID != "":
		opts = append(opts, config.WithHTTPClient(hc),
			config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(p.cred.AccessKeyID, p.cred.SecretAccessKey, p.cred.SessionToken)))
	case !s.AllowHostCredentials:
		// prepare refuses such a pull first; this keeps the default chain
		// out of reach should a caller ever skip it.
		return nil, s.checkCredentials(KindS3, p.cred)
	}
	// With the host's credentials (the operator allowed them), the chain
	// finds them with the SDK's own client: the instance metadata service
	// is link-local. Only the bucket's calls go through hc.
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, &ProviderError{Provider: "S3", Msg: "cannot load AWS credentials: " + clip(err.Error(), 200)}
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.HTTPClient = hc
		// S3-compatible servers often send no checksums; the SDK would log
		// a line per object.
		o.DisableLogOutputChecksumValidationSkipped = true
		if p.set.EndpointURL != "" {
			o.BaseEndpoint = aws.String(p.set.EndpointURL)
			o.UsePathStyle = true // S3-compatible servers rarely have bucket subdomains
		}
	}), nil
}

// s3Error says what an S3 refusal means for the key or prefix asked.
func s3Error(err error, action, what string) error {
	if err == nil {
		return nil
	}
	// A call that never got an answer first: the SDK wraps it in a
	// response error without a response.
	if msg, ok := unreachable(err, "check the bucket's name and region"); ok {
		return &ProviderError{Provider: "S3", Msg: msg}
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status := re.HTTPStatusCode()
		msg := ""
		switch status {
		case http.StatusForbidden:
			msg = fmt.Sprintf("the credentials lack %s on %s", action, what)
		case http.StatusNotFound:
			msg = fmt.Sprintf("%s does not exist", what)
		case http.StatusMovedPermanently, http.StatusBadRequest:
			msg = fmt.Sprintf("%s refused: check the bucket's region (%s)", action, clip(re.Err.Error(), 120))
		default:
			msg = fmt.Sprintf("%s on %s failed: %s", action, what, clip(re.Err.Error(), 160))
		}
		return &ProviderError{Provider: "S3", Status: status, Msg: msg}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return &ProviderError{Provider: "S3", Msg: action + " on " + what + " timed out"}
	}
	return &ProviderError{Provider: "S3", Msg: action + " on " + what + ": " + clip(err.Error(), 200)}
}

// period is one billing period's manifest as listed.
type period struct {
	key      string // "20261101-20261201" or "BILLING_PERIOD=2026-11"
	manifest string // object key
	etag     string
}

func (e s3Export) periods(ctx context.Context, c s3Client, p pull) ([]period, error) {
	prefix := strings.Trim(p.set.Prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	var out []period
	var token *string
	for {
		ctx, cancel := context.WithTimeout(ctx, CallTimeout)
		page, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(p.set.Bucket), Prefix: aws.String(prefix), ContinuationToken: token})
		cancel()
		if err != nil {
			return nil, s3Error(err, "s3:ListBucket", fmt.Sprintf("bucket %s, prefix %q", p.set.Bucket, prefix))
		}
		for _, o := range page.Contents {
			rel := strings.TrimPrefix(aws.ToString(o.Key), prefix)
			m := legacyPeriod.FindStringSubmatch(rel)
			if m == nil {
				m = exportPeriod.FindStringSubmatch(rel)
			}
			if m != nil {
				out = append(out, period{key: m[1], manifest: aws.ToString(o.Key), etag: strings.Trim(aws.ToString(o.ETag), `"`)})
			}
		}
		if !aws.ToBool(page.IsTruncated) || page.NextContinuationToken == nil {
			break
		}
		token = page.NextContinuationToken
	}
	slices.SortFunc(out, func(a, b period) int { return strings.Compare(a.key, b.key) })
	return out, nil
}

func (e s3Export) files(ctx context.Context, s *Service, p pull) ([]File, error) {
	c, err := e.client(ctx, s, p)
	if err != nil {
		return nil, err
	}
	periods, err := e.periods(ctx, c, p)
	if err != nil {
		return nil, err
	}
	if len(periods) == 0 {
		return nil, &ProviderError{Provider: "S3", Msg: fmt.Sprintf("no export manifests under s3://%s/%s: the prefix is the export's prefix and name (my-prefix/my-export)", p.set.Bucket, p.set.Prefix)}
	}
	var files []File
	for _, per := range periods {
		m, err := e.manifest(ctx, c, p.set.Bucket, per.manifest)
		if err != nil {
			return nil, err
		}
		version := m.AssemblyID + m.ExecutionID
		stamp := per.etag + "/" + version
		if p.state.Periods[per.key] == stamp {
			continue // unchanged since imported
		}
		keys, err := m.keys(p.set.Bucket)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", per.manifest, err)
		}
		if len(keys) == 0 {
			continue // a period with no data yet
		}
		key := per.key
		name := path.Base(strings.TrimSuffix(per.manifest, "-Manifest.json")) + " " + key
		if version != "" {
			name += " " + version
		}
		files = append(files, File{
			Name: name + dataExt(keys),
			Open: func(ctx context.Context) (io.ReadCloser, error) {
				return joinParts(ctx, s3Opener{c, p.set.Bucket}.open, keys)
			},
			Done: func(st *State) {
				if st.Periods == nil {
					st.Periods = map[string]string{}
				}
				st.Periods[key] = stamp
			},
		})
	}
	return files, nil
}

func (e s3Export) manifest(ctx context.Context, c s3Client, bucket, key string) (s3Manifest, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return s3Manifest{}, s3Error(err, "s3:GetObject", key)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(io.LimitReader(out.Body, maxManifestBytes+1))
	if err != nil {
		return s3Manifest{}, s3Error(err, "s3:GetObject", key)
	}
	var m s3Manifest
	if len(b) > maxManifestBytes || jsonlimit.Unmarshal(b, &m) != nil {
		return m, &ProviderError{Provider: "S3", Status: http.StatusOK, Msg: key + " is not an export manifest (JSON with reportKeys or dataFiles)"}
	}
	return m, nil
}

// keys are the manifest's data files as keys of bucket: legacy manifests
// list keys, Data Exports s3:// URIs. A file in another bucket is refused.
func (m s3Manifest) keys(bucket string) ([]string, error) {
	keys := slices.Clone(m.ReportKeys)
	for _, f := range m.DataFiles {
		u, err := url.Parse(f)
		if err != nil || u.Scheme != "s3" {
			return nil, fmt.Errorf("data file %q is not an s3:// URI", f)
		}
		if u.Host != bucket {
			return nil, fmt.Errorf("data file %q is in another bucket than %s", f, bucket)
		}
		keys = append(keys, strings.TrimPrefix(u.Path, "/"))
	}
	for _, k := range keys {
		if strings.HasSuffix(k, ".zip") {
			return nil, fmt.Errorf("%s is zipped: set the report's compression to GZIP", k)
		}
	}
	return keys, nil
}

func (s3Export) test(ctx context.Context, s *Service, p pull) error {
	e := s3Export{}
	c, err := e.client(ctx, s, p)
	if err != nil {
		return err
	}
	periods, err := e.periods(ctx, c, p)
	if err != nil {
		return err
	}
	if len(periods) == 0 {
		return &ProviderError{Provider: "S3", Msg: fmt.Sprintf("no export manifests under s3://%s/%s", p.set.Bucket, p.set.Prefix)}
	}
	_, err = e.manifest(ctx, c, p.set.Bucket, periods[len(periods)-1].manifest)
	return err
}

// opener opens one data file of a bucket or container by its key or name,
// saying in plain words what a refusal means.
type opener func(ctx context.Context, key string) (io.ReadCloser, error)

func (c s3Opener) open(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := c.c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(c.bucket), Key: aws.String(key)})
	if err != nil {
		return nil, s3Error(err, "s3:GetObject", key)
	}
	return out.Body, nil
}

type s3Opener struct {
	c      s3Client
	bucket string
}

// joinParts reads a version's parts as one CSV: each part unzipped when
// gzipped, and every header after the first dropped once checked to be the
// first's. A period split into parts is one import, so that it replaces
// the period's rows once. A version of one Parquet part is passed through
// as it is (the importer reads Parquet); one of several Parquet parts is
// written out as one CSV, part by part (parquetParts).
func joinParts(ctx context.Context, open opener, keys []string) (io.ReadCloser, error) {
	j := &joined{ctx: ctx, open: open, keys: keys}
	return j, nil
}

type joined struct {
	ctx    context.Context
	open   opener
	keys   []string
	header []byte
	cur    io.Reader
	body   io.Closer
	last   byte // the last byte read, to end a part without a line break
}

func (j *joined) next() error {
	if j.body != nil {
		j.body.Close()
		j.body = nil
	}
	key := j.keys[0]
	j.keys = j.keys[1:]
	body, err := j.open(j.ctx, key)
	if err != nil {
		return err
	}
	j.body = body
	br := bufio.NewReaderSize(body, 64<<10)
	var r io.Reader = br
	if magic, _ := br.Peek(4); string(magic) == "PAR1" {
		if j.header == nil && len(j.keys) == 0 {
			j.cur = br // the version's only part: the importer reads Parquet itself
			return nil
		}
		f, err := parquetAsCSV(j.ctx, key, br)
		if err != nil {
			return err
		}
		body.Close()
		j.body, r = f, f
	} else if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		r = zr
	}
	lr := bufio.NewReaderSize(r, 64<<10)
	line, err := lr.ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", key, err)
	}
	if j.header == nil {
		j.header = line
		j.cur = io.MultiReader(bytes.NewReader(line), lr)
		return nil
	}
	if !bytes.Equal(bytes.TrimRight(line, "\r\n"), bytes.TrimRight(j.header, "\r\n")) {
		return fmt.Errorf("%s: its header differs from the first part's: the parts of one version must share their columns", key)
	}
	j.cur = lr
	if j.last != '\n' {
		j.cur = io.MultiReader(strings.NewReader("\n"), lr)
	}
	return nil
}

func (j *joined) Read(p []byte) (int, error) {
	for {
		if j.cur == nil {
			if len(j.keys) == 0 {
				return 0, io.EOF
			}
			if err := j.next(); err != nil {
				return 0, err
			}
		}
		n, err := j.cur.Read(p)
		if n > 0 {
			j.last = p[n-1]
		}
		if errors.Is(err, io.EOF) {
			j.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (j *joined) Close() error {
	if j.body != nil {
		return j.body.Close()
	}
	return nil
}

// parquetAsCSV spools one Parquet part of several to a temporary file (a
// Parquet file is read from its footer) and writes it out as CSV in
// another, which it returns open at its start; closing it removes it.
func parquetAsCSV(ctx context.Context, key string, r io.Reader) (io.ReadCloser, error) {
	pf, err := os.CreateTemp("", "burnrate-part-*.parquet")
	if err != nil {
		return nil, err
	}
	defer func() { pf.Close(); os.Remove(pf.Name()) }()
	size, err := io.Copy(pf, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	cf, err := os.CreateTemp("", "burnrate-part-*.csv")
	if err != nil {
		return nil, err
	}
	t := &tempFile{cf}
	bw := bufio.NewWriterSize(cf, 256<<10)
	err = ingest.ParquetCSV(ctx, pf, size, key, bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		t.Close()
		return nil, err
	}
	if _, err := cf.Seek(0, io.SeekStart); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// tempFile is a temporary file that is removed when closed.
type tempFile struct{ *os.File }

func (t *tempFile) Close() error {
	err := t.File.Close()
	os.Remove(t.Name())
	return err
}
