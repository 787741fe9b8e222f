// /help: the rules of the three games, short, and how to play here.

import { h } from '../dom.js';
import { getLang, t } from '../i18n.js';

const RULES = {
  en: [
    {
      id: 'basics',
      title: 'The board',
      items: [
        'Each player has 6 pits, numbered 1 to 6 from their own left. Your row is always at the bottom of the screen.',
        'A move takes every stone from one of your non-empty pits and sows them one by one counter-clockwise: along your row to the right, then along the far row to the left.',
        'The player who moves first is chosen when the game is made; after a game, “rematch” swaps sides.',
      ],
    },
    {
      id: 'kalah',
      title: 'Kalah',
      items: [
        '4 stones in each pit, 48 in all. Your store is on your right.',
        'Sowing drops a stone in your own store but skips the opponent’s store. With 13 or more stones the sowing goes all the way round.',
        'Last stone in your store: you move again (“one more”), with no limit.',
        'Last stone in an empty pit of yours, with stones in the pit opposite: that stone and the opposite stones go to your store. If the opposite pit is empty, nothing is captured.',
        'When all six pits of either side are empty after a move, the game ends; each side’s remaining stones go to their owner’s store. More stones wins; 25 decides it.',
      ],
    },
    {
      id: 'oware',
      title: 'Oware (Abapa)',
      items: [
        '4 seeds per pit, 48 in all, no stores: captured seeds are kept aside.',
        'Sowing always skips the pit it started from.',
        'If the last seed lands in an opponent’s pit and makes it 2 or 3, you capture it, and then the pits before it while they are the opponent’s and hold 2 or 3.',
        'A capture that would leave the opponent with no seeds at all captures nothing.',
        'If the opponent has no seeds you must give them some, when you can.',
        'The game ends at once when someone has 25. If the player to move has no seeds, the other player takes the seeds left; if you must feed but cannot, you take them. A position seen a third time ends the game too, each player taking the seeds on their side. More seeds wins; 24–24 is a draw.',
      ],
    },
    {
      id: 'mangala',
      title: 'Mangala',
      items: [
        '6 stones per hole, 72 in all, no stores: captured stones are kept aside.',
        'Sow one lap, starting with the next hole; with 12 or more stones the emptied starting hole gets one too.',
        'If the last stone makes its hole (in either row) hold 2, 4 or 6, you capture it, and then the holes before it while they hold 2, 4 or 6.',
        'A player with no stones passes. The game ends when the board is empty or a position repeats a third time. 37 or more wins; 36–36 is a draw.',
      ],
    },
    {
      id: 'controls',
      title: 'Playing here',
      items: [
        'Click or tap one of your pits to play it, or press the keys 1 to 6 (counted from your left). The pit played last is ringed in orange.',
        'Against the AI and on one device you can take back a move (“Undo”) and start again (“Play again”). “Resign” asks first.',
        'Invite a friend: make a link, send it (“Copy link” or “Share”); your friend opens it and presses “Join”. You move first. After a game, “Rematch, sides swapped” starts the next one.',
        'If your opponent’s connection drops, they have two minutes to return. After that you may continue against the AI or claim the win.',
        'Anyone can watch a live game from the lobby. Ranked games change ratings (Glicko-2); the leaderboard lists registered players with settled ratings.',
      ],
    },
  ],
  ko: [
    {
      id: 'basics',
      title: '게임판',
      items: [
        '두 사람은 구멍을 6개씩 가지며, 구멍 번호는 자기 왼쪽부터 1~6입니다. 내 줄은 언제나 화면 아래쪽에 있습니다.',
        '내 차례에는 돌이 있는 내 구멍 하나를 골라 돌을 모두 집고, 시계 반대 방향으로 하나씩 나누어 넣습니다. 내 줄을 따라 오른쪽으로, 이어서 건너편 줄을 따라 왼쪽으로 갑니다.',
        '누가 먼저 두는지는 게임을 만들 때 정해지고, 한 판이 끝난 뒤 ‘한 판 더’를 하면 선후공이 바뀝니다.',
      ],
    },
    {
      id: 'kalah',
      title: '칼라',
      items: [
        '구멍마다 돌 4개, 모두 48개로 시작합니다. 내 창고는 내 오른쪽에 있습니다.',
        '나누어 넣을 때 내 창고에는 넣고 상대 창고는 건너뜁니다. 돌이 13개 이상이면 한 바퀴를 돌아 처음 구멍에도 넣습니다.',
        '마지막 돌이 내 창고에 들어가면 한 번 더 둡니다. 횟수 제한은 없습니다.',
        '마지막 돌이 내 쪽 빈 구멍에 들어가고 맞은편 구멍에 돌이 있으면, 그 돌과 맞은편 돌을 모두 내 창고로 가져옵니다. 맞은편이 비어 있으면 가져오지 않습니다.',
        '둔 뒤에 어느 한쪽의 구멍 6개가 모두 비면 끝나고, 남은 돌은 각 쪽 주인의 창고에 들어갑니다. 창고의 돌이 많은 쪽이 이기며, 25개면 승부가 납니다.',
      ],
    },
    {
      id: 'oware',
      title: '오와레(아바파)',
      items: [
        '구멍마다 씨앗 4개, 모두 48개이며 창고는 없습니다. 따낸 씨앗은 따로 모읍니다.',
        '나누어 넣을 때 시작한 구멍은 언제나 건너뜁니다.',
        '마지막 씨앗이 상대 구멍에 떨어져 그 구멍이 2개나 3개가 되면 따냅니다. 그 앞 구멍들도 상대 구멍이고 2개나 3개인 동안 이어서 따냅니다.',
        '따내면 상대 씨앗이 하나도 남지 않게 되는 경우에는 아무것도 따내지 않습니다.',
        '상대에게 씨앗이 없으면, 줄 수 있는 한 씨앗을 건네주는 수를 두어야 합니다.',
        '누군가 25개를 모으면 바로 끝납니다. 둘 차례인 사람에게 씨앗이 없으면 상대가 남은 씨앗을 가져가고, 건네주어야 하는데 그럴 수 없으면 내가 가져갑니다. 같은 국면이 세 번째 나와도 끝나며, 각자 자기 쪽 씨앗을 가져갑니다. 많이 모은 쪽이 이기고 24대 24는 무승부입니다.',
      ],
    },
    {
      id: 'mangala',
      title: '망갈라',
      items: [
        '구멍마다 돌 6개, 모두 72개이며 창고는 없습니다. 따낸 돌은 따로 모읍니다.',
        '다음 구멍부터 한 바퀴만 나누어 넣습니다. 돌이 12개 이상이면 비워진 시작 구멍에도 하나 넣습니다.',
        '마지막 돌이 떨어진 구멍(어느 줄이든)이 2, 4, 6개가 되면 따내고, 그 앞 구멍들도 2, 4, 6개인 동안 이어서 따냅니다.',
        '돌이 없는 사람은 차례를 넘깁니다. 판이 비거나 같은 국면이 세 번째 나오면 끝납니다. 37개 이상이면 이기고 36대 36은 무승부입니다.',
      ],
    },
    {
      id: 'controls',
      title: '이 사이트에서 두는 법',
      items: [
        '내 구멍을 클릭하거나 탭하면 둡니다. 키보드 1~6(내 왼쪽부터)으로도 둘 수 있습니다. 직전에 둔 구멍에는 주황색 표시가 붙습니다.',
        'AI 대결과 이 기기에서 하는 게임에서는 ‘한 수 무르기’와 ‘다시 하기’를 쓸 수 있습니다. ‘기권’은 한 번 더 묻습니다.',
        '친구와 대전: 링크를 만들어 ‘URL 복사’나 ‘공유’로 보내면, 친구가 열어서 ‘참가하기’를 누릅니다. 만든 사람이 선공입니다. 한 판이 끝나면 ‘선후공 바꿔서 한 판 더’로 이어 둡니다.',
        '상대의 연결이 끊기면 2분 안에 돌아올 수 있습니다. 그 뒤에는 ‘AI로 교체해서 계속하기’나 ‘승리 선언’을 할 수 있습니다.',
        '로비에서 진행 중인 게임을 누구나 관전할 수 있습니다. 랭크 게임은 레이팅(Glicko-2)을 바꾸며, 순위표에는 레이팅이 안정된 가입 회원이 나옵니다.',
      ],
    },
  ],
};

export function mount(root) {
  function draw() {
    document.title = `${t('nav_help')} · Mancala Arena`;
    const sections = RULES[getLang()] || RULES.en;
    root.replaceChildren(h('article', { class: 'card page-card help', 'data-testid': 'help' },
      h('h1', { class: 'page-title', text: t('help_title') }),
      h('nav', { class: 'toc', 'aria-label': t('help_contents') },
        sections.map((section) => h('a', { href: `#${section.id}`, text: section.title, onclick: (event) => {
          event.preventDefault();
          document.getElementById(section.id)?.scrollIntoView({ behavior: 'smooth' });
        } }))),
      sections.map((section) => h('section', { id: section.id, class: 'help-section' },
        h('h2', { text: section.title }),
        h('ul', {}, section.items.map((item) => h('li', { text: item })))))));
  }
  draw();
  return { relabel: draw };
}
