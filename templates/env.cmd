## torchfix snippet template for cmd.exe, read by `torchfix env --shell cmd`
## (src/shellenv/snippet.cpp; docs/env.md, docs/windows.md). Template syntax:
##   - A line that starts with "##" is a comment of the template; it is dropped.
##   - "@@ NAME" starts a section; its lines run to the next "@@" line.
##     header  : written once, first          footer : written once, last
##     set     : written for each variable that gets a value
##     prepend : written for each directory put in front of a ';' list (PATH);
##               it moves one found further back to the front
##   - {{name}} is replaced by the variable's name, {{value}} by its value as
##     it is (cmd has no quoting that stops %NAME% expansion: a value with
##     '"', '%', '=' or a control byte is refused, pointing at PowerShell),
##     {{reason}} by one line saying why the variable is there (set/prepend
##     sections only); {{shell}}, {{version}} and {{purpose}} anywhere.
##   - Anything else is copied as it is.
## `set "NAME=value"`: the quotes keep & | < > ^ in the value literal and
## leave no trailing space in it. %PATH:value;=% drops the entry's earlier
## copies (compared without regard to case, as Windows does).
## Every variable line must follow a one-line "rem {{reason}}" comment.
@@ header
rem Environment for PyTorch on this machine, from torchfix {{version}} (--for {{purpose}}).
rem Regenerate: torchfix env --shell {{shell}} --for {{purpose}}
@@ set
rem {{reason}}
set "{{name}}={{value}}"
@@ prepend
rem {{reason}}
set "{{name}}={{value}};%{{name}}:{{value}};=%"
