// /help: the rules of the three games, short, and how to play here. Under
// its rules a section may have tips, a little history and common questions;
// they stay in this file beside the rules, so the two languages and the
// rules they explain are edited together.

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
      tips: [
        'Count before you move. A pit ends in your store when it holds as many stones as it is steps away: 6 in pit 1, 5 in pit 2, and so on down to 1 in pit 6. At the start, pit 3 with its 4 stones does exactly that: a free extra move.',
        'When several pits can reach your store, play the one nearest the store first. Sowing a pit further left adds a stone to every pit on its right and spoils their count.',
        'Keep an eye on empty pits. An empty pit of yours facing a full pit of your opponent’s is a capture to aim for; the same shape on their side is a threat to you. Play the loaded pit, or drop a stone into the empty pit that threatens it.',
        'Stones left in your row at the end go to your own store. Late in the game your pit 6, beside your store, is a safe place for a pile: the pit facing it is one your opponent can reach only by sowing all the way round.',
        'Before you empty your own row to end the game, count: every stone still on your opponent’s side goes to their store.',
      ],
      history: [
        'Kalah belongs to mancala, a large family of count-and-capture games in which seeds or stones are sown around a board of pits. Such games have been played for centuries across Africa, the Middle East and Asia, and hundreds of local versions are known. The word comes from Arabic, from a verb meaning “to move”.',
        'Kalah itself is young: William Julius Champion Jr. devised it in the United States in the mid-20th century and sold it as a boxed game, and its rules spread with the sets.',
        'Its rules are simple and nothing is hidden, so Kalah became a common test case for game-playing programs. In 2000 Irving, Donkers and Uiterwijk solved the standard game of six pits and four stones: with perfect play the first player wins. Under the rules on this page, where a lone stone opposite an empty pit stays put, this site’s own solver agrees: the first player wins by 8 stones, opening with pit 3.',
      ],
      faq: [
        { q: 'Why did I get another turn?', a: 'Your last stone landed in your own store. That always earns another move, and the board shows “One more!”. It can happen several times in a row.' },
        { q: 'My last stone landed in an empty pit. Why was nothing captured?', a: 'A capture needs stones in the pit directly opposite. If that pit is empty, your stone stays where it landed and the turn passes. An empty pit on your opponent’s side never captures.' },
        { q: 'Why did my stones skip a place?', a: 'They skipped your opponent’s store: sowing never drops a stone there. Your own store is never skipped.' },
        { q: 'Why did the game end with stones still on the board?', a: 'Kalah ends as soon as one side’s six pits are all empty after a move. The stones still on the board are not lost: they go to the store of the player whose row they are in.' },
        { q: 'Why is the “Perfect” AI level offered only for Kalah?', a: 'Kalah is the one game of the three that this site can work out exactly. At that level the AI tries to prove the best move within its thinking time and plays it when it can. The proof succeeds mostly later in the game, so early on it plays much like “Advanced”.' },
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
      tips: [
        'Guard your pits with 1 or 2 seeds. One more seed makes them 2 or 3, so any such pit your opponent’s last seed can reach is in danger, and so are the pits just before it. A pit with fewer than 12 seeds ends exactly that many pits further on, so its reach is easy to count.',
        'Look for runs of small pits on your opponent’s side. Captures run backwards from the last seed, so one sowing that brings several neighbouring pits to 2 or 3 takes them all.',
        'Consider building one big pit (players call it a kroo). With 12 or more seeds the sowing goes right round the board, skipping its own pit, and drops a second seed into the pits it passes again: timed well, it turns a long run of your opponent’s pits into 2s and 3s and captures them all.',
        'Keep seeds on your own side. If your row runs empty your opponent must give you some when they can; when they cannot, every seed left on the board goes to them.',
        'Mind the two rules that protect an empty side: a capture that would take all your opponent’s seeds captures nothing, and when they have no seeds you must give them some. Check both before you go for a sweep.',
      ],
      history: [
        'Oware is a mancala game of the Akan people of Ghana. Close relatives are played under many names and rules across West Africa, and the game crossed the Atlantic to the Caribbean, where versions called warri are still played.',
        'Abapa is the name of the rule set played here, with its rules against taking all of an opponent’s seeds and for feeding them. It is the version most often used in competitions.',
      ],
      faq: [
        { q: 'Why can’t I play some of my pits?', a: 'When your opponent has no seeds, only moves that give them at least one are allowed, so pits that would not reach their side cannot be chosen. Empty pits cannot be played either.' },
        { q: 'Why did my capture not happen?', a: 'A capture needs the last seed to land on your opponent’s side and bring that pit to exactly 2 or 3. And if the capture would take every seed your opponent has left, the move is played but captures nothing.' },
        { q: 'There were more pits of 2 or 3. Why did the capture stop?', a: 'Captures go back from the last pit one pit at a time and stop at the first pit that does not hold 2 or 3, or at the end of your opponent’s row. Pits beyond a gap are not taken.' },
        { q: 'Is there an extra turn in Oware?', a: 'No. There are no stores, and every move passes the turn.' },
        { q: 'Why did the game end with seeds still on the board?', a: 'Someone reached 25, more than half the seeds; or a side with no seeds could not be fed; or the same position came up a third time. The rules above say who takes the seeds that are left.' },
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
      tips: [
        'Count to the last stone. With fewer than 12 stones, a hole’s last stone lands exactly that many holes further on round the board.',
        'Holes with 1, 3 or 5 stones are targets: one more stone makes them 2, 4 or 6. Captures happen in both rows, so your own odd holes are as exposed as your opponent’s.',
        'Aim for chains. Sowing adds a stone to every hole it passes, so when your last stone ends a run of odd holes, they all turn even together and are captured in one move.',
        'A hole holding 6 or more stones cannot be captured: any stone that reaches it takes it past 6. It is a safe place to keep stones until you need them.',
      ],
      history: [
        'Mangala is the name the mancala game goes by in Turkey, where it has a long tradition and is still widely played.',
        'Rules differ from place to place. The version played here, with six stones per hole, no stores and captures of 2, 4 or 6 in either row, is one traditional form; other versions, some with stores, are common too, so a friend may have learned different rules.',
      ],
      faq: [
        { q: 'Why did my opponent move twice in a row?', a: 'You had no stones in your row, so your turn was passed for you and your opponent moved again. You play again as soon as a stone reaches your row.' },
        { q: 'Why were stones taken from my own row?', a: 'In Mangala captures happen in both rows. If your opponent’s last stone makes one of your holes 2, 4 or 6, they take it, just as you can take from your own row with your last stone.' },
        { q: 'My last stone made a hole even. Why was nothing captured?', a: 'Only 2, 4 or 6 stones are captured. A hole of 8, 10 or more stays where it is.' },
        { q: 'Is there an extra turn in Mangala?', a: 'No. There are no stores, and every move passes the turn, except that a player with no stones passes and the other moves again.' },
        { q: 'How can the game be a draw?', a: 'You need 37 of the 72 stones to win. If the game ends with 36 each, it is a draw. When it ends on a repeated position, each player first adds the stones left in their own row.' },
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
      faq: [
        { q: 'Are games against the AI rated?', a: 'No. Games against the AI and games on one device never change ratings. When the ranked queue finds nobody in time and an AI steps in, that game is casual too.' },
        { q: 'What happens if my opponent leaves?', a: 'If their connection drops in a game between two people, they have two minutes to come back; a game clock keeps running meanwhile. After that you can let the AI take their seat (“Continue against the AI”; the game is then casual) or claim the win. If they never made a move, claiming ends the game with no result.' },
        { q: 'Why did my game end with no result?', a: 'A game counts only once each side has made a move. If it ends before that, by a resignation, a claim or a first move not made in time, it is cancelled: no winner and no rating change.' },
        { q: 'Can I take back a move?', a: 'Against the AI and on one device, yes: “Undo” takes back the last move; against the AI it takes back your move together with the AI’s replies. Games between two people have no undo.' },
        { q: 'Why was my ranked game against a friend casual?', a: 'Only a few rated games between the same two players count in a day. Further games are casual, and the game page says so.' },
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
      tips: [
        '두기 전에 돌을 세어 보세요. 구멍의 돌 수가 창고까지 남은 칸 수와 같으면 마지막 돌이 창고에 들어갑니다. 1번 구멍은 6개, 2번은 5개, … 6번은 1개일 때입니다. 처음 판에서는 돌 4개가 든 3번 구멍이 바로 그래서, 두면 한 번 더 둘 수 있습니다.',
        '창고에 닿는 구멍이 여럿이면 창고에 가까운 구멍부터 두세요. 왼쪽 구멍을 먼저 두면 그 오른쪽 구멍마다 돌이 하나씩 늘어 계산이 어긋납니다.',
        '빈 구멍을 눈여겨보세요. 내 빈 구멍 맞은편에 상대 돌이 많으면 노려 볼 만한 기회이고, 상대 쪽에 같은 모양이 있으면 내가 위험합니다. 돌이 많은 내 구멍을 먼저 두어 비우거나, 그 구멍을 노리는 상대의 빈 구멍에 돌을 넣어 막으세요.',
        '끝날 때 내 줄에 남은 돌은 내 창고로 갑니다. 후반에는 창고 바로 옆 6번 구멍에 돌을 모아 두면 안전합니다. 그 맞은편 구멍은 상대가 판을 한 바퀴 돌아야만 닿는 곳이기 때문입니다.',
        '내 줄을 비워 게임을 끝내기 전에 돌을 세어 보세요. 그 순간 상대 줄에 남은 돌은 모두 상대 창고로 들어갑니다.',
      ],
      history: [
        '칼라는 만칼라에 속하는 게임입니다. 만칼라는 구멍이 파인 판에 씨앗이나 돌을 나누어 넣고, 세어서 따내는 놀이를 두루 이르는 말입니다. 아프리카와 중동, 아시아 곳곳에서 수백 년 넘게 이어져 왔고, 지역마다 다른 규칙이 수백 가지나 전합니다. 이름은 ‘옮기다’라는 뜻의 아랍어 동사에서 왔습니다.',
        '칼라 자체는 역사가 짧습니다. 20세기 중반 미국의 윌리엄 줄리어스 챔피언 주니어(William Julius Champion Jr.)가 고안해 상자에 든 게임으로 팔았고, 그 게임 세트와 함께 규칙이 퍼졌습니다.',
        '규칙이 간단하고 숨은 정보가 없어서, 칼라는 게임을 두는 컴퓨터 프로그램을 시험하는 단골 문제가 되었습니다. 2000년에 Irving, Donkers, Uiterwijk 세 연구자가 구멍 6개, 돌 4개인 표준 칼라를 완전히 풀어, 양쪽이 최선을 다하면 선공이 이긴다는 것을 밝혔습니다. 이 페이지의 규칙(맞은편 구멍이 비어 있으면 아무것도 따내지 않음)으로 이 사이트가 직접 풀어 봐도 결론은 같습니다. 선공이 3번 구멍으로 시작하면 8개 차이로 이깁니다.',
      ],
      faq: [
        { q: '왜 한 번 더 두나요?', a: '마지막 돌이 내 창고에 들어갔기 때문입니다. 그럴 때마다 한 번 더 두며, 화면에 ‘한 번 더!’가 나타납니다. 여러 번 이어질 수도 있습니다.' },
        { q: '마지막 돌이 빈 구멍에 들어갔는데 왜 따내지 못했나요?', a: '바로 맞은편 구멍에 돌이 있어야 따낼 수 있습니다. 맞은편이 비어 있으면 돌은 떨어진 자리에 그대로 있고 차례가 넘어갑니다. 상대 쪽 빈 구멍에 들어간 경우에는 따내지 않습니다.' },
        { q: '돌이 한 칸을 건너뛰었어요.', a: '상대 창고를 건너뛴 것입니다. 나누어 넣을 때 상대 창고에는 돌을 넣지 않습니다. 내 창고는 건너뛰지 않습니다.' },
        { q: '판에 돌이 남았는데 왜 끝났나요?', a: '둔 뒤에 어느 한쪽의 구멍 6개가 모두 비면 바로 끝납니다. 남은 돌은 없어지지 않고, 그 돌이 있는 줄 주인의 창고로 들어갑니다.' },
        { q: '‘완벽’ 난이도는 왜 칼라에만 있나요?', a: '세 게임 가운데 이 사이트가 끝까지 정확히 계산할 수 있는 게임은 칼라뿐입니다. 이 난이도의 AI는 생각할 시간 안에 최선의 수를 증명해 보고, 증명하면 그 수를 둡니다. 증명은 주로 게임 후반에 성공하므로, 초반에는 ‘고급’과 비슷하게 둡니다.' },
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
      tips: [
        '씨앗이 1개나 2개인 내 구멍을 지키세요. 하나만 더 들어가면 2개나 3개가 되므로, 상대의 마지막 씨앗이 닿는 곳이면 따일 수 있고 그 앞 구멍들까지 함께 잃을 수 있습니다. 씨앗이 12개보다 적은 구멍은 정확히 그 수만큼 떨어진 구멍에서 끝나므로, 어디까지 닿는지 쉽게 셀 수 있습니다.',
        '상대 쪽에 씨앗이 적은 구멍이 나란히 있는지 살펴보세요. 따내기는 마지막 씨앗에서 거꾸로 이어지므로, 이웃한 여러 구멍을 한꺼번에 2개나 3개로 만들면 한 번에 모두 따냅니다.',
        '한 구멍에 씨앗을 많이 모아 두는 방법도 있습니다(흔히 ‘크루’라고 부릅니다). 12개 이상이면 시작 구멍을 건너뛰며 판을 한 바퀴 넘게 돌아, 다시 지나가는 구멍에 씨앗이 하나씩 더 들어갑니다. 때를 잘 맞추면 상대 구멍 여러 개를 2개, 3개로 만들어 한꺼번에 따낼 수 있습니다.',
        '내 줄에 씨앗을 남겨 두세요. 내 쪽이 비면 상대는 할 수 있는 한 씨앗을 건네주어야 하지만, 그럴 수 없으면 판에 남은 씨앗이 모두 상대 것이 됩니다.',
        '빈 쪽을 지켜 주는 두 규칙을 잊지 마세요. 상대 씨앗을 모두 가져가게 되는 따내기는 아무것도 따내지 않고, 상대에게 씨앗이 없으면 건네주는 수를 두어야 합니다. 크게 따내려고 할 때는 두 가지를 미리 따져 보세요.',
      ],
      history: [
        '오와레는 가나의 아칸족이 즐겨 온 만칼라 게임입니다. 서아프리카 곳곳에서 비슷한 게임을 여러 이름과 규칙으로 두며, 대서양 건너 카리브해 지역에도 전해져 지금도 ‘와리(warri)’ 같은 이름으로 이어지고 있습니다.',
        '아바파(Abapa)는 이 사이트가 따르는 규칙의 이름으로, 상대 씨앗을 모두 따낼 수 없다는 규칙과 씨앗을 건네주어야 한다는 규칙이 들어 있습니다. 대회에서 가장 많이 쓰이는 규칙입니다.',
      ],
      faq: [
        { q: '왜 고를 수 없는 구멍이 있나요?', a: '상대에게 씨앗이 하나도 없으면 씨앗을 건네주는 수만 둘 수 있습니다. 그래서 상대 쪽까지 닿지 않는 구멍은 고를 수 없습니다. 빈 구멍도 고를 수 없습니다.' },
        { q: '왜 따내지 못했나요?', a: '마지막 씨앗이 상대 쪽 구멍에 떨어져 그 구멍이 정확히 2개나 3개가 되어야 따냅니다. 또 상대 씨앗을 하나도 남기지 않게 되는 따내기라면, 수는 그대로 두어지지만 아무것도 따내지 않습니다.' },
        { q: '2개나 3개인 구멍이 더 있는데 왜 따내기가 멈췄나요?', a: '따내기는 마지막 구멍에서 한 칸씩 거꾸로 가다가, 2개나 3개가 아닌 구멍을 만나거나 상대 줄이 끝나면 멈춥니다. 중간에 끊기면 그 너머의 구멍은 따내지 않습니다.' },
        { q: '오와레에도 한 번 더 두기가 있나요?', a: '없습니다. 창고가 없고, 한 수를 두면 언제나 차례가 넘어갑니다.' },
        { q: '판에 씨앗이 남았는데 왜 끝났나요?', a: '누군가 절반이 넘는 25개를 모았거나, 씨앗이 없는 쪽에 건네줄 수 없었거나, 같은 국면이 세 번째 나왔기 때문입니다. 남은 씨앗을 누가 가져가는지는 위의 규칙에 나와 있습니다.' },
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
      tips: [
        '마지막 돌이 어디에 떨어질지 세어 보세요. 돌이 12개보다 적으면 마지막 돌은 정확히 그 수만큼 떨어진 구멍에 들어갑니다.',
        '돌이 1, 3, 5개인 구멍이 표적입니다. 하나만 더 들어가면 2, 4, 6개가 되기 때문입니다. 따내기는 양쪽 줄 모두에서 일어나므로, 내 줄의 홀수 구멍도 상대 구멍만큼 위험합니다.',
        '연달아 따내기를 노리세요. 나누어 넣으면 지나가는 구멍마다 돌이 하나씩 늘어나므로, 홀수 구멍이 이어진 자리 끝에 마지막 돌을 떨어뜨리면 모두 짝수가 되어 한 번에 따냅니다.',
        '돌이 6개 이상인 구멍은 따일 일이 없습니다. 돌이 하나라도 더 들어가면 6개를 넘기 때문입니다. 필요할 때까지 돌을 모아 두기 좋은 곳입니다.',
      ],
      history: [
        '망갈라는 튀르키예에서 만칼라 놀이를 부르는 이름입니다. 그곳에서 오랜 전통을 지닌 놀이로, 지금도 널리 즐깁니다.',
        '규칙은 지역마다 다릅니다. 구멍마다 돌 6개, 창고 없음, 어느 줄에서든 2·4·6개를 따내는 이 사이트의 방식은 전통 규칙 가운데 하나입니다. 창고를 쓰는 방식 등 다른 규칙도 흔하므로, 친구는 다른 규칙으로 배웠을 수도 있습니다.',
      ],
      faq: [
        { q: '왜 상대가 두 번 연달아 두었나요?', a: '내 줄에 돌이 하나도 없어서 내 차례가 저절로 넘어갔기 때문입니다. 내 줄에 돌이 다시 들어오면 다시 둘 수 있습니다.' },
        { q: '왜 내 줄의 돌을 상대가 가져갔나요?', a: '망갈라에서는 양쪽 줄 모두에서 따낼 수 있습니다. 상대의 마지막 돌이 내 구멍을 2, 4, 6개로 만들면 상대가 가져갑니다. 나도 마지막 돌로 내 줄의 구멍을 따낼 수 있습니다.' },
        { q: '마지막 돌로 짝수를 만들었는데 왜 따내지 못했나요?', a: '2, 4, 6개일 때만 따냅니다. 8개나 10개처럼 더 큰 짝수는 그대로 남습니다.' },
        { q: '망갈라에도 한 번 더 두기가 있나요?', a: '없습니다. 창고가 없고 한 수를 두면 차례가 넘어갑니다. 다만 상대 줄에 돌이 없으면 상대 차례가 넘어가서 내가 이어서 둡니다.' },
        { q: '무승부는 어떻게 나오나요?', a: '72개 가운데 37개 이상을 모아야 이깁니다. 게임이 끝났을 때 둘 다 36개면 무승부입니다. 같은 국면이 반복되어 끝날 때는 각자 자기 줄에 남은 돌을 먼저 더합니다.' },
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
      faq: [
        { q: 'AI와 둔 게임도 레이팅에 반영되나요?', a: '아니요. AI와 둔 게임과 한 기기에서 둔 게임은 레이팅을 바꾸지 않습니다. 랭크 대기열에서 제때 상대가 없어 AI가 대신 나온 게임도 친선전입니다.' },
        { q: '상대가 나가 버리면 어떻게 되나요?', a: '사람끼리 두는 게임에서 상대의 연결이 끊기면, 상대는 2분 안에 돌아올 수 있습니다. 시간 제한이 있는 게임이면 그동안에도 시계는 계속 갑니다. 2분이 지나면 ‘AI로 교체해서 계속하기’로 AI가 상대 자리를 이어받게 하거나(이때부터 친선전이 됩니다) ‘승리 선언’을 할 수 있습니다. 상대가 한 수도 두지 않았다면 승리 선언을 해도 결과 없이 취소됩니다.' },
        { q: '왜 결과 없이 끝났나요?', a: '양쪽이 모두 한 수 이상 두어야 결과가 남습니다. 그 전에 기권하거나, 승리를 선언하거나, 제시간에 첫 수를 두지 않으면 대국이 취소되어 승패도 레이팅 변화도 없습니다.' },
        { q: '한 수 무를 수 있나요?', a: 'AI와 둘 때와 한 기기에서 둘 때는 ‘한 수 무르기’로 무를 수 있습니다. AI와 둘 때는 내 수와 그 뒤에 AI가 둔 수가 함께 물러집니다. 사람끼리 두는 게임에서는 무를 수 없습니다.' },
        { q: '친구와 둔 랭크 게임이 왜 친선전이 되었나요?', a: '같은 두 사람 사이의 랭크 게임은 하루에 몇 판까지만 레이팅에 반영됩니다. 그 뒤의 게임은 친선전이 되며, 게임 화면에 그렇게 표시됩니다.' },
      ],
    },
  ],
};

// Headings of the parts under a section's rules. They live here rather than
// in strings/ because every other word of this page does.
const HEADINGS = {
  en: { tips: 'Tips', history: 'History', faq: 'Common questions' },
  ko: { tips: '요령', history: '역사', faq: '자주 묻는 질문' },
};

// The optional parts, in the order they show. Ids and test ids are built
// from the section's id (`kalah-faq`, `help-kalah-faq`), so links and
// browser tests find a part without depending on its words.
const PARTS = [
  { key: 'tips', render: bullets },
  { key: 'history', render: paragraphs },
  { key: 'faq', render: questions },
];

function bullets(items) {
  return h('ul', {}, items.map((item) => h('li', { text: item })));
}

function paragraphs(texts) {
  return texts.map((text) => h('p', { text }));
}

// Questions fold: a reader scans the list and opens the one they came with.
function questions(entries) {
  return entries.map(({ q, a }) => h('details', {}, h('summary', { text: q }), h('p', { text: a })));
}

// A part reuses `help-section` for its rule and spacing; its heading is an
// h3 in the small type, so it reads as a step below the game's h2.
function part(section, { key, render }, headings) {
  if (!section[key]) return null;
  return h('section', { id: `${section.id}-${key}`, class: 'help-section help-part', 'data-testid': `help-${section.id}-${key}` },
    h('h3', { class: 'small', text: headings[key] }),
    render(section[key]));
}

function sectionView(section, headings) {
  return h('section', { id: section.id, class: 'help-section' },
    h('h2', { text: section.title }),
    bullets(section.items),
    PARTS.map((each) => part(section, each, headings)));
}

export function mount(root) {
  function draw() {
    document.title = `${t('nav_help')} · Mancala Arena`;
    const sections = RULES[getLang()] || RULES.en;
    const headings = HEADINGS[getLang()] || HEADINGS.en;
    root.replaceChildren(h('article', { class: 'card page-card help', 'data-testid': 'help' },
      h('h1', { class: 'page-title', text: t('help_title') }),
      h('nav', { class: 'toc', 'aria-label': t('help_contents') },
        sections.map((section) => h('a', { href: `#${section.id}`, text: section.title, onclick: (event) => {
          event.preventDefault();
          document.getElementById(section.id)?.scrollIntoView({ behavior: 'smooth' });
        } }))),
      sections.map((section) => sectionView(section, headings))));
  }
  draw();
  return { relabel: draw };
}
