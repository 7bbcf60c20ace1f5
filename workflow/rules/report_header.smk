# The report's header (snakemake --report ... --report-metadata <results_dir>/report_metadata.yaml,
# docs/workflow.md "make report"): Snakemake 9.27.1 passes each string of the metadata through
# docutils' pseudo-XML writer, so the landing page would list "whole", "encoding", "errors" and
# "version" under every key; where its renderer does so, strings are rendered to HTML instead.
import html as _html
import snakemake.report as _snakemake_report


def _render_metadata_as_html(metadata):
    """Each string of the report's metadata (and of its lists) as escaped HTML, in place."""
    for key, value in metadata.items():
        if isinstance(value, str):
            metadata[key] = _html.escape(value)
        elif isinstance(value, list):
            metadata[key] = [_html.escape(v) if isinstance(v, str) else v for v in value]


def _renders_strings_to_parts(render):
    probe = {"key": "value"}
    render(probe)
    return not isinstance(probe["key"], str)


if _renders_strings_to_parts(_snakemake_report.render_metadata):
    _snakemake_report.render_metadata = _render_metadata_as_html
