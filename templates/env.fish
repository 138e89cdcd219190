## torchfix snippet template for fish, read by `torchfix env --shell fish`
## (src/shellenv/snippet.cpp; docs/env.md). Template syntax:
##   - A line that starts with "##" is a comment of the template; it is dropped.
##   - "@@ NAME" starts a section; its lines run to the next "@@" line.
##     header  : written once, first          footer : written once, last
##     set     : written for each variable that gets a value
##     prepend : written for each directory put in front of a list (PATH);
##               it must leave an entry that is already first alone and move
##               one found further back to the front, so that it wins
##   - {{name}} is replaced by the variable's name, {{value}} by its value
##     already quoted for this shell (one word, one line), {{reason}} by one
##     line saying why the variable is there (set/prepend sections only);
##     {{shell}}, {{version}} and {{purpose}} (build, runtime, all) anywhere.
##   - Anything else is copied as it is.
## fish treats every variable whose name ends in PATH as a list joined with ':'
## when exported, so "prepend" adds a list element.
## "--" ends set's options, so a value such as "-n" or "--" is a value.
## Every variable line must follow a one-line "# {{reason}}" comment.
@@ header
# Environment for PyTorch on this machine, from torchfix {{version}} (--for {{purpose}}).
# Regenerate: torchfix env --shell {{shell}} --for {{purpose}}
@@ set
# {{reason}}
set -gx -- {{name}} {{value}}
@@ prepend
# {{reason}}
set -l __torchfix_at (contains -i -- {{value}} ${{name}}); if test "$__torchfix_at" != 1; set -q __torchfix_at[1]; and set -e {{name}}[$__torchfix_at]; set -gx -- {{name}} {{value}} ${{name}}; end; set -e __torchfix_at
