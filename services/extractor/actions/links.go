package actions

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"golang.org/x/net/html"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/htmlnode"
	"distill.dev/services/extractor/internal/weburl"
)

// fileExtensions are the path extensions of links to files rather than to
// pages. Text formats the extractor reads (txt, json, xml) are pages.
var fileExtensions = map[string]bool{
	"pdf": true, "epub": true, "mobi": true, "djvu": true, "ps": true,
	"zip": true, "gz": true, "tgz": true, "tar": true, "bz2": true, "xz": true, "zst": true,
	"7z": true, "rar": true, "jar": true, "whl": true,
	"csv": true, "tsv": true, "xls": true, "xlsx": true, "ods": true,
	"doc": true, "docx": true, "odt": true, "rtf": true,
	"ppt": true, "pptx": true, "odp": true, "key": true,
	"mp3": true, "wav": true, "flac": true, "ogg": true, "m4a": true, "aac": true,
	"mp4": true, "m4v": true, "mov": true, "avi": true, "mkv": true, "webm": true,
	"png": true, "jpg": true, "jpeg": true, "gif": true, "webp": true, "tif": true, "tiff": true,
	"dmg": true, "pkg": true, "exe": true, "msi": true, "deb": true, "rpm": true,
	"apk": true, "ipa": true, "appimage": true, "iso": true, "img": true, "bin": true,
	"torrent": true,
}

// links returns the page's links and downloads, one per href, in the order
// their hrefs first appear. Links that stay on the page (fragments, empty
// hrefs) or leave the web (javascript:, mailto:, tel:) are not actions. An
// entry takes the first non-empty text among the links to its href; a
// link that has none anywhere cannot be chosen by what it says and is
// left out, while a download falls back to its file name.
func (s *scan) links(page, base *url.URL, limit int) ([]*distillv1.LinkAction, []*distillv1.DownloadAction) {
	links := []*distillv1.LinkAction{}
	downloads := []*distillv1.DownloadAction{}
	linkAt := map[string]int{}
	downloadAt := map[string]int{}
	for _, a := range s.anchors {
		raw := strings.TrimSpace(htmlnode.Attr(a, "href"))
		if raw == "" || strings.HasPrefix(raw, "#") {
			continue
		}
		href, ok := weburl.Resolve(base, raw, "http", "https")
		if !ok || weburl.SamePage(raw, href, page) {
			continue
		}
		text := s.anchorText(a)
		if name, ok := downloadName(a, href); ok {
			if i, seen := downloadAt[href]; seen {
				if downloads[i].Text == "" {
					downloads[i].Text = text
				}
				continue
			}
			downloadAt[href] = len(downloads)
			d := &distillv1.DownloadAction{Href: href, Text: text}
			if name != "" {
				d.Filename = &name
			}
			downloads = append(downloads, d)
			continue
		}
		if i, seen := linkAt[href]; seen {
			if links[i].Text == "" {
				links[i].Text = text
			}
			continue
		}
		linkAt[href] = len(links)
		links = append(links, &distillv1.LinkAction{Href: href, Text: text})
	}

	named := links[:0]
	for _, l := range links {
		if l.Text != "" {
			named = append(named, l)
		}
	}
	links = capList(named, limit)
	for i, l := range links {
		l.ActionId = fmt.Sprintf("link_%d", i)
	}
	downloads = capList(downloads, limit)
	for i, d := range downloads {
		if d.Text == "" {
			d.Text = d.GetFilename()
		}
		d.ActionId = fmt.Sprintf("download_%d", i)
	}
	return links, downloads
}

// downloadName reports whether a link leads to a file, and the name the
// file would be saved under: the download attribute's, else the last
// segment of the path. A download attribute makes any link a download;
// otherwise the path's extension decides.
func downloadName(a *html.Node, href string) (string, bool) {
	u, err := url.Parse(href)
	if err != nil {
		return "", false
	}
	last := u.Path[strings.LastIndex(u.Path, "/")+1:]
	if htmlnode.HasAttr(a, "download") {
		// Browsers keep only the last segment of a suggested name.
		name := htmlnode.Attr(a, "download")
		name = strings.TrimSpace(name[strings.LastIndexAny(name, `/\`)+1:])
		if name == "" {
			name = last
		}
		return name, true
	}
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(last), "."))
	if !fileExtensions[ext] {
		return "", false
	}
	return last, true
}
