"""The results library as a static site: ``ssdpts db site DIR`` (docs/results-db.md, "The site").

One folder that needs no server and fetches nothing: it opens from ``file://``, from any web
server or from a file share::

    DIR/index.html           every run of the library: sort, filter, search; select runs to compare
    DIR/assets/              the page's script and style, and the report's chart code (chart.js on d3)
    DIR/data/runs/<uid>.js   each run's compared cells, loaded when the run is selected
    DIR/runs/<uid>/report.html   each run's report, as 'ssdpts report' renders it
    DIR/site.json            what the last build made (runs, fingerprints), for the next one

The comparison in the page applies ``ssdpts compare``'s rules to the cells ``compare`` reads
(site/data.py), and draws compare's plots with the reports' own chart code (report/templates/
chart.js). Built again, the site reads and renders only the runs that changed (site/build.py).
"""

from __future__ import annotations

from ssdpts.library.site.build import Built, build

__all__ = ["Built", "build"]
