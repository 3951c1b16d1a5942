// The dashboard's entry module: each page says which it is in <body data-page>.
import { comparePage } from './compare.js';
import { studiesPage } from './list.js';
import { studyPage } from './study.js';

const page = document.body.dataset.page;
if (page === 'study') void studyPage();
else if (page === 'compare') void comparePage();
else void studiesPage();
