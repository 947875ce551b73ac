" Vim filetype plugin file
" Language:	tlx, the tile-kernel language (docs/language.md)

if exists("b:did_ftplugin")
	finish
endif
let b:did_ftplugin = 1

setlocal comments=s1:/*,mb:*,ex:*/,:// commentstring=//\ %s
setlocal formatoptions-=t formatoptions+=croql

let b:undo_ftplugin = "setlocal comments< commentstring< formatoptions<"
