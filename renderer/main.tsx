import { render } from 'preact';
import { App } from './App';
import { onLinkClick } from './router';
import './styles.css';

document.addEventListener('click', onLinkClick);
render(<App />, document.getElementById('app')!);
