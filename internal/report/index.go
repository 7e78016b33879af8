package report

import (
	"fmt"
	"html/template"
	"io"
	"path/filepath"

	"github.com/rdmabench/rdmabench/artifacts"
	"github.com/rdmabench/rdmabench/internal/atomicfile"
	"github.com/rdmabench/rdmabench/internal/latplot"
	"github.com/rdmabench/rdmabench/internal/summary"
)

// IndexFile is the index page's name in the results directory.
const IndexFile = "index.html"

// Page is what the index shows.
type Page struct {
	Title    string
	Summary  string   // the summary table as printed
	Overview string   // the overview picture, relative; "" for none
	Files    []string // results files beside the index (bench.txt, ...), relative
	Benches  []Bench
}

// runFiles are the links of each run, in order: label and file base.
var runFiles = [][2]string{
	{"histogram", latplot.HistogramBase + ".png"},
	{"tail", latplot.TailBase + ".png"},
	{"samples", artifacts.LatencyBase + artifacts.SamplesExt},
	{"HDR log", artifacts.LatencyBase + artifacts.HlogExt},
	{"percentiles", artifacts.LatencyBase + artifacts.HgrmExt},
	{"histogram.svg", latplot.HistogramBase + ".svg"},
	{"tail.svg", latplot.TailBase + ".svg"},
}

type link struct{ Label, Href string }

type runView struct {
	Run
	P50, P99, Max string
	Thumb         string // the histogram, shown small
	Links         []link
}

var funcs = template.FuncMap{
	"runs": func(b Bench) []runView {
		var out []runView
		for _, r := range b.Runs {
			v := runView{Run: r, Max: summary.FormatMicros(r.Max / 1000)}
			if p, ok := r.Percentiles["p50"]; ok {
				v.P50 = summary.FormatMicros(p / 1000)
			}
			if p, ok := r.Percentiles["p99"]; ok {
				v.P99 = summary.FormatMicros(p / 1000)
			}
			v.Thumb, _ = r.File(latplot.HistogramBase + ".png")
			for _, f := range runFiles {
				if href, ok := r.File(f[1]); ok {
					v.Links = append(v.Links, link{f[0], href})
				}
			}
			out = append(out, v)
		}
		return out
	},
}

// The page checks its own images once loaded and says at the top which
// failed, so a broken picture is never silent (the render test reads the
// same mark).
var page = template.Must(template.New("index").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 1.5em; }
pre { font-size: 13px; background: #f6f6f6; padding: 0.8em; overflow-x: auto; }
table { border-collapse: collapse; font-size: 14px; }
td, th { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: right; }
td.name, th.name { text-align: left; }
img.thumb { width: 210px; }
#broken { color: #b00; font-weight: bold; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p id="broken" data-broken=""></p>
<h2>Summary</h2>
<pre>{{.Summary}}</pre>
<p>{{range .Files}}<a href="{{.}}">{{.}}</a> {{end}}</p>
{{if .Overview}}<h2>Overview</h2>
<p><a href="{{.Overview}}"><img id="overview" src="{{.Overview}}" alt="latency against message size, and the tail curves of each size" style="max-width: 100%"></a></p>{{end}}
<h2>Benchmarks</h2>
<ul>{{range .Benches}}<li><a href="#{{.Name}}">{{.Name}}</a> ({{len .Runs}} runs)</li>{{end}}</ul>
{{range .Benches}}<h3 id="{{.Name}}">{{.Name}}</h3>
<p><a href="{{.Summary}}">summary.json</a></p>
<table>
<tr><th class="name">run</th><th>samples</th><th>p50 µs</th><th>p99 µs</th><th>max µs</th><th>stalls</th><th class="name">histogram</th><th class="name">files</th></tr>
{{range runs .}}<tr><td class="name">{{.Name}} #{{.Rep}}</td><td>{{.Count}}</td><td>{{.P50}}</td><td>{{.P99}}</td><td>{{.Max}}</td><td>{{.Stalls}}</td>
<td class="name">{{if .Thumb}}<a href="{{.Thumb}}"><img class="thumb" src="{{.Thumb}}" alt="histogram of {{.Name}} #{{.Rep}}"></a>{{end}}</td>
<td class="name">{{range .Links}}<a href="{{.Href}}">{{.Label}}</a> {{end}}{{if .Missing}}<br>missing: {{range .Missing}}{{.}} {{end}}{{end}}</td></tr>
{{end}}</table>
{{end}}
<script>
window.addEventListener("load", function () {
  var bad = [];
  document.querySelectorAll("img").forEach(function (img) {
    if (!img.complete || img.naturalWidth === 0) { bad.push(img.getAttribute("src")); }
  });
  var p = document.getElementById("broken");
  p.setAttribute("data-broken", bad.join(" "));
  p.setAttribute("data-images", String(document.images.length));
  p.setAttribute("data-checked", "yes");
  if (bad.length) { p.textContent = bad.length + " image(s) failed to load: " + bad.join(", "); }
});
</script>
</body>
</html>
`))

// WriteIndex writes the index page to out/index.html.
func WriteIndex(out string, p Page) (string, error) {
	path := filepath.Join(out, IndexFile)
	err := atomicfile.Write(path, 0o644, func(f io.Writer) error { return page.Execute(f, p) })
	if err != nil {
		return "", fmt.Errorf("report: writing %s: %w", path, err)
	}
	return path, nil
}
