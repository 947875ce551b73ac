" tlx kernels: *.tlx
autocmd BufRead,BufNewFile *.tlx setfiletype tlx
