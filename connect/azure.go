package connect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/burnrate/burnrate/jsonlimit"
)

// azureExport reads Azure Cost Management exports from a storage
// container, as Cost Management writes them (docs/connections.md, "What a sync does"):
//
//	PREFIX/[EXPORT/]YYYYMMDD-YYYYMMDD/RUN ID/manifest.json   (runInfo, blobs[].blobName)
//	PREFIX/[EXPORT/]YYYYMMDD-YYYYMMDD/RUN ID/part_0_0001.csv[.gz] | .parquet
//
// Each run of an export for a billing period writes a folder of its own
// with a manifest naming its files. The current version of a period is its
// newest run (the manifest written last; a tie goes to the later
// runInfo.submittedTime). Exports of several kinds (actual, amortized,
// FOCUS) may share the prefix: each export's periods are its own, and the
// importer keeps an actual and an amortized export of the same period side
// by side (their cost basis differs). Exports of the older kind, without a
// manifest, wrote one file straight into the period's folder; the newest
// such file is the period's version.
type azureExport struct{}

var (
	azureRun    = regexp.MustCompile(`^(?:(.+)/)?(\d{8}-\d{8})/([^/]+)/manifest\.json$`)
	azureLegacy = regexp.MustCompile(`^(?:(.+)/)?(\d{8}-\d{8})/([^/]+\.csv(?:\.gz)?)$`)
)

// azureManifest is what matters of a run's manifest.json.
type azureManifest struct {
	ExportConfig struct {
		ExportName string `json:"exportName"`
		Type       string `json:"type"` // ActualCost, AmortizedCost, FocusCost, …
	} `json:"exportConfig"`
	RunInfo struct {
		RunID         string `json:"runId"`
		SubmittedTime string `json:"submittedTime"`
	} `json:"runInfo"`
	Blobs []struct {
		BlobName string `json:"blobName"`
	} `json:"blobs"`
}

// azureRunBlob is a run's manifest (or an older export's single file) as
// listed.
type azureRunBlob struct {
	period   string // EXPORT/YYYYMMDD-YYYYMMDD relative to the prefix
	export   string // the export's folder name
	run      string // the run's folder; the file's name for an older export
	name     string // the blob
	etag     string
	modified time.Time
	legacy   bool
}

// azureServiceURL is the blob service a connection reads: its endpoint, or
// the public cloud's for its account.
func azureServiceURL(set Settings) string {
	if set.EndpointURL != "" {
		return strings.TrimRight(set.EndpointURL, "/")
	}
	return "https://" + set.Account + ".blob.core.windows.net"
}

func (azureExport) client(s *Service, p pull) (*container.Client, error) {
	retry := s.Retry
	if retry.Attempts <= 0 {
		retry = DefaultRetry
	}
	// Each call's answer must start within CallTimeout; a data file then
	// streams for as long as its import takes (bounded by the job's).
	// The blob service is the tenant's to aim (an endpoint, a SAS URL):
	// dialled through the egress policy (policy.go), redirects included.
	hc := &http.Client{Transport: s.transport()}
	opts := &container.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: hc,
		Retry: policy.RetryOptions{
			MaxRetries: int32(retry.Attempts - 1), RetryDelay: retry.Wait, MaxRetryDelay: retry.MaxWait,
		},
	}}
	u := azureServiceURL(p.set) + "/" + url.PathEscape(p.set.Container)
	if p.cred.AccountKey != "" {
		cred, err := container.NewSharedKeyCredential(p.set.Account, p.cred.AccountKey)
		if err != nil {
			return nil, &ProviderError{Provider: "Azure Storage", Msg: "the account key is not base64: paste key1 or key2 from the storage account's Access keys"}
		}
		return container.NewClientWithSharedKeyCredential(u, cred, opts)
	}
	return container.NewClientWithNoCredential(u+"?"+strings.TrimPrefix(p.cred.SASToken, "?"), opts)
}

// azureError says what a refusal from Azure Storage means for the blob or
// prefix asked.
func azureError(err error, action, what string) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		msg := ""
		switch {
		case bloberror.HasCode(err, bloberror.AuthenticationFailed, bloberror.AuthorizationFailure):
			msg = fmt.Sprintf("the account key or SAS token was refused (%s): check it, the SAS token's expiry (se=), "+
				"and that the storage account's firewall lets this server in", re.ErrorCode)
		case re.StatusCode == http.StatusForbidden:
			need := "Read (sp=r)"
			if action == "list" {
				need = "List (sp=l)"
			}
			msg = fmt.Sprintf("the credentials may not %s %s (%s): a SAS token needs %s; a role, Storage Blob Data Reader", action, what, re.ErrorCode, need)
		case bloberror.HasCode(err, bloberror.ContainerNotFound):
			msg = "the container does not exist"
		case re.StatusCode == http.StatusNotFound:
			msg = what + " does not exist"
		default:
			msg = fmt.Sprintf("%s %s failed: %s", action, what, clip(re.ErrorCode, 120))
		}
		return &ProviderError{Provider: "Azure Storage", Status: re.StatusCode, Msg: msg}
	}
	if msg, ok := unreachable(err, "check the storage account name"); ok {
		return &ProviderError{Provider: "Azure Storage", Msg: msg}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return &ProviderError{Provider: "Azure Storage", Msg: action + " " + what + " timed out"}
	}
	return &ProviderError{Provider: "Azure Storage", Msg: action + " " + what + ": " + clip(err.Error(), 200)}
}

// runs lists the prefix and returns, per export and billing period, the
// runs found, periods in order.
func (azureExport) runs(ctx context.Context, c *container.Client, p pull) (map[string][]azureRunBlob, []string, error) {
	prefix := strings.Trim(p.set.Prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	byPeriod := map[string][]azureRunBlob{}
	pager := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix})
	for pager.More() {
		cctx, cancel := context.WithTimeout(ctx, CallTimeout)
		page, err := pager.NextPage(cctx)
		cancel()
		if err != nil {
			return nil, nil, azureError(err, "list", fmt.Sprintf("container %s, prefix %q", p.set.Container, prefix))
		}
		for _, b := range page.Segment.BlobItems {
			if b.Name == nil || b.Properties == nil {
				continue
			}
			rel := strings.TrimPrefix(*b.Name, prefix)
			r := azureRunBlob{name: *b.Name}
			if b.Properties.ETag != nil {
				r.etag = strings.Trim(string(*b.Properties.ETag), `"`)
			}
			if b.Properties.LastModified != nil {
				r.modified = *b.Properties.LastModified
			}
			if m := azureRun.FindStringSubmatch(rel); m != nil {
				r.export, r.run = m[1], m[3]
				r.period = path.Join(m[1], m[2])
			} else if m := azureLegacy.FindStringSubmatch(rel); m != nil {
				r.export, r.run, r.legacy = m[1], m[3], true
				r.period = path.Join(m[1], m[2])
			} else {
				continue
			}
			if r.export == "" {
				r.export = path.Base(prefix) // the prefix names the export itself
			}
			byPeriod[r.period] = append(byPeriod[r.period], r)
		}
	}
	periods := make([]string, 0, len(byPeriod))
	for k := range byPeriod {
		periods = append(periods, k)
	}
	slices.Sort(periods)
	return byPeriod, periods, nil
}

func (e azureExport) files(ctx context.Context, s *Service, p pull) ([]File, error) {
	c, err := e.client(s, p)
	if err != nil {
		return nil, err
	}
	byPeriod, periods, err := e.runs(ctx, c, p)
	if err != nil {
		return nil, err
	}
	if len(periods) == 0 {
		return nil, &ProviderError{Provider: "Azure Storage", Msg: fmt.Sprintf("no export runs under container %s, prefix %q: the prefix is the export's storage directory (and, optionally, its name)", p.set.Container, p.set.Prefix)}
	}
	open := func(ctx context.Context, name string) (io.ReadCloser, error) {
		resp, err := c.NewBlobClient(name).DownloadStream(ctx, nil)
		if err != nil {
			return nil, azureError(err, "read", name)
		}
		return resp.Body, nil
	}
	var files []File
	for _, key := range periods {
		runs := byPeriod[key]
		// The newest run; runs written in the same second are told apart
		// by their manifests below.
		slices.SortFunc(runs, func(a, b azureRunBlob) int {
			if c := a.modified.Compare(b.modified); c != 0 {
				return c
			}
			return strings.Compare(a.name, b.name)
		})
		newest := runs[len(runs)-1]
		var tied []azureRunBlob
		for _, r := range runs {
			if r.modified.Equal(newest.modified) {
				tied = append(tied, r)
			}
		}
		if len(tied) == 1 && p.state.Periods[key] == newest.etag+"/"+newest.run {
			continue // unchanged since imported
		}
		cur, m, err := e.current(ctx, open, tied)
		if err != nil {
			return nil, err
		}
		stamp := cur.etag + "/" + cur.run
		if p.state.Periods[key] == stamp {
			continue
		}
		var names []string
		if cur.legacy {
			names = []string{cur.name}
		} else {
			dir := path.Dir(cur.name)
			for _, b := range m.Blobs {
				n := strings.TrimPrefix(b.BlobName, "/")
				if !strings.Contains(n, "/") {
					n = dir + "/" + n // a name relative to the run's folder
				} else if rest, ok := strings.CutPrefix(n, p.set.Container+"/"); ok && !strings.HasPrefix(n, dir+"/") {
					n = rest // a name that starts with the container's
				}
				names = append(names, n)
			}
		}
		for _, n := range names {
			if strings.HasSuffix(n, ".zip") {
				return nil, fmt.Errorf("%s is zipped: set the export's compression to gzip or none", n)
			}
		}
		if len(names) == 0 {
			continue // a run with no data yet
		}
		// The export's type goes into the file's name: the importer tells
		// an amortized export from an actual one by its rows, and, when
		// no row shows it, by the name.
		kind := m.ExportConfig.Type
		name := strings.Join(strings.Fields(strings.Join([]string{cur.export, kind, path.Base(key), cur.run}, " ")), " ")
		name += dataExt(names)
		files = append(files, File{
			Name: name,
			Open: func(ctx context.Context) (io.ReadCloser, error) { return joinParts(ctx, open, names) },
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

// current picks the period's version among runs written in the same
// second, by their manifests' submittedTime, and returns its manifest.
func (e azureExport) current(ctx context.Context, open opener, tied []azureRunBlob) (azureRunBlob, azureManifest, error) {
	best := tied[len(tied)-1] // an older export's file, when no run has a manifest
	var (
		bestM azureManifest
		found bool
	)
	for _, r := range tied {
		if r.legacy {
			continue
		}
		m, err := e.manifest(ctx, open, r.name)
		if err != nil {
			return best, bestM, err
		}
		if !found || m.RunInfo.SubmittedTime >= bestM.RunInfo.SubmittedTime {
			best, bestM, found = r, m, true
		}
	}
	return best, bestM, nil
}

func (azureExport) manifest(ctx context.Context, open opener, name string) (azureManifest, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	body, err := open(ctx, name)
	if err != nil {
		return azureManifest{}, err
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxManifestBytes+1))
	if err != nil {
		return azureManifest{}, azureError(err, "read", name)
	}
	var m azureManifest
	if len(b) > maxManifestBytes || jsonlimit.Unmarshal(b, &m) != nil {
		return m, &ProviderError{Provider: "Azure Storage", Status: http.StatusOK, Msg: name + " is not an export manifest (JSON with blobs[].blobName)"}
	}
	return m, nil
}

func (e azureExport) test(ctx context.Context, s *Service, p pull) error {
	c, err := e.client(s, p)
	if err != nil {
		return err
	}
	byPeriod, periods, err := e.runs(ctx, c, p)
	if err != nil {
		return err
	}
	if len(periods) == 0 {
		return &ProviderError{Provider: "Azure Storage", Msg: fmt.Sprintf("no export runs under container %s, prefix %q", p.set.Container, p.set.Prefix)}
	}
	runs := byPeriod[periods[len(periods)-1]]
	last := runs[len(runs)-1]
	body, err := c.NewBlobClient(last.name).DownloadStream(ctx, nil)
	if err != nil {
		return azureError(err, "read", last.name)
	}
	return body.Body.Close()
}

// dataExt is the extension a version's file is named with: Parquet is
// imported as it is when the version is one file, and as CSV when it is
// several (joinParts).
func dataExt(keys []string) string {
	if len(keys) == 1 && strings.HasSuffix(keys[0], ".parquet") {
		return ".parquet"
	}
	return ".csv"
}

var (
	storageAccount = regexp.MustCompile(`^[a-z0-9]{3,24}$`)
	containerName  = regexp.MustCompile(`^(\$root|[a-z0-9](?:[a-z0-9]|-[a-z0-9]){2,62})$`)
)

// validateAzure checks an Azure connection as typed. A SAS URL of the
// container (as the portal's "Generate SAS" prints it) stands for the
// endpoint, the container and the token at once.
func (in Input) validateAzure() (Settings, Credentials, error) {
	set := Settings{Account: strings.TrimSpace(in.Account), Container: strings.TrimSpace(in.Container),
		Prefix: strings.Trim(strings.TrimSpace(in.Prefix), "/"), EndpointURL: strings.TrimRight(strings.TrimSpace(in.EndpointURL), "/")}
	cred := Credentials{AccountKey: strings.TrimSpace(in.AccountKey), SASToken: strings.TrimPrefix(strings.TrimSpace(in.SASToken), "?")}
	if strings.HasPrefix(cred.SASToken, "https://") || strings.HasPrefix(cred.SASToken, "http://") {
		u, err := url.Parse(cred.SASToken)
		if err != nil || u.Host == "" || u.RawQuery == "" || u.User != nil {
			return set, cred, &InputError{"sas_token", "a SAS URL is the container's URL followed by ?sv=…&sig=…"}
		}
		dir, name := path.Split(strings.TrimRight(u.Path, "/"))
		if name == "" {
			return set, cred, &InputError{"sas_token", "the SAS URL names no container: generate the SAS on the container"}
		}
		set.Container = name
		svc := url.URL{Scheme: u.Scheme, Host: u.Host, Path: strings.TrimRight(dir, "/")}
		if host, _, _ := strings.Cut(u.Host, "."); strings.HasSuffix(u.Host, ".blob.core.windows.net") && svc.Path == "" {
			set.Account = host
		} else {
			set.EndpointURL = svc.String()
		}
		cred.SASToken = u.RawQuery
	}
	// Every field's mistake at once: a form refused one field at a time
	// takes as many tries as it has mistakes.
	var errs []error
	// A SAS token with an endpoint needs no account name: the endpoint
	// says where, and the token signs.
	if (set.Account != "" || set.EndpointURL == "" || cred.SASToken == "") && !storageAccount.MatchString(set.Account) {
		errs = append(errs, &InputError{"account", "the storage account's name: 3 to 24 lowercase letters and digits"})
	}
	if !containerName.MatchString(set.Container) {
		errs = append(errs, &InputError{"container", "a container name: 3 to 63 lowercase letters, digits and single hyphens"})
	}
	if len(set.Prefix) > 1024 || !utf8.ValidString(set.Prefix) || strings.ContainsFunc(set.Prefix, unicode.IsControl) {
		errs = append(errs, &InputError{"prefix", "the export's storage directory in the container, such as exports/focus"})
	}
	switch {
	case (cred.AccountKey == "") == (cred.SASToken == ""):
		errs = append(errs, &InputError{"account_key", "give the storage account's key, or a SAS token with Read and List, not both"})
	case len(cred.AccountKey) > 256 || strings.ContainsFunc(cred.AccountKey, func(r rune) bool { return r <= ' ' || r > '~' }):
		errs = append(errs, &InputError{"account_key", "an account key is base64, as the storage account's Access keys show it"})
	case len(cred.SASToken) > 2048 || strings.ContainsFunc(cred.SASToken, func(r rune) bool { return r <= ' ' || r > '~' }):
		errs = append(errs, &InputError{"sas_token", "a SAS token is the query string sv=…&sig=…, printable ASCII without spaces"})
	case cred.SASToken != "" && !strings.Contains(cred.SASToken, "sig="):
		errs = append(errs, &InputError{"sas_token", "a SAS token has a signature (sig=…): copy the whole token"})
	}
	if set.EndpointURL != "" {
		u, err := url.Parse(set.EndpointURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" {
			errs = append(errs, &InputError{"endpoint_url", "the blob service's base URL, such as https://acct.blob.core.windows.net"})
		}
	}
	switch len(errs) {
	case 0:
	case 1:
		return set, cred, errs[0]
	default:
		return set, cred, errors.Join(errs...)
	}
	return set, cred, nil
}

// sasExpiry says when a SAS token expires, for its hint: the one thing
// about it worth showing again.
func sasExpiry(token string) string {
	q, err := url.ParseQuery(token)
	if err != nil || q.Get("se") == "" {
		return ""
	}
	return ", expires " + q.Get("se")
}
