"""Keras 2.2.4's babi_rnn, babi_memnn, pretrained_word_embeddings and lstm_seq2seq_restore,
model and calls as written for Keras, on small data.

The bAbI archive is found by ``get_file`` in minidl's cache (``MINIDL_HOME``)
and read with ``tarfile`` as the examples read it; the GloVe file and the
newsgroup tree are read from disk as pretrained_word_embeddings reads them
(conftest writes all three). The parameter counts are the ones Keras 2
prints, worked out in the comments from the layer sizes. Each test also
checks one behaviour against numpy or a rule of Keras's.
"""

import re
import tarfile

import numpy as np

import minidl
from minidl import layers
from minidl.layers import (
    LSTM, Activation, Conv1D, Dense, Dropout, Embedding, GlobalMaxPooling1D, Input,
    MaxPooling1D, Permute, add, concatenate, dot)
from minidl.models import Model, Sequential, load_model
from minidl.preprocessing.sequence import pad_sequences
from minidl.utils.data_utils import get_file

BABI_ORIGIN = 'https://s3.amazonaws.com/text-datasets/babi_tasks_1-20_v1-2.tar.gz'


def words_of(sentence):
    """A sentence's words and punctuation marks, in order ("Where is Mary?" -> 4 tokens)."""
    return [token.strip() for token in re.split(r'(\W+)', sentence) if token.strip()]


def read_stories(file):
    """(story words, question words, answer) triples of a bAbI task file (bytes lines).

    A line numbered 1 starts a new story; a line with tabs is a question, which
    sees every statement of its story before it.
    """
    triples, story = [], []
    for line in file.readlines():
        number, text = line.decode('utf-8').strip().split(' ', 1)
        if int(number) == 1:
            story = []
        if '\t' in text:
            question, answer, _ = text.split('\t')
            triples.append(([word for sentence in story for word in sentence],
                            words_of(question), answer))
        else:
            story.append(words_of(text))
    return triples


def babi_task(babi_home, monkeypatch, member):
    """The train and test triples of one task, through get_file and tarfile as the examples."""
    monkeypatch.setenv('MINIDL_HOME', str(babi_home))
    path = get_file('babi-tasks-v1-2.tar.gz', origin=BABI_ORIGIN)
    with tarfile.open(path) as archive:
        return (read_stories(archive.extractfile(member.format('train'))),
                read_stories(archive.extractfile(member.format('test'))))


def vocabulary(triples):
    words = set()
    for story, question, answer in triples:
        words |= set(story + question + [answer])
    return {word: index + 1 for index, word in enumerate(sorted(words))}  # 0 pads


def test_babi_rnn(babi_home, monkeypatch):
    minidl.set_seed(801)
    train, test = babi_task(babi_home, monkeypatch,
                            'tasks_1-20_v1-2/en/qa2_two-supporting-facts_{}.txt')
    word_idx = vocabulary(train + test)
    vocab_size = len(word_idx) + 1
    story_maxlen = max(len(story) for story, _, _ in train + test)
    query_maxlen = max(len(question) for _, question, _ in train + test)

    def vectorize(triples):
        stories = [[word_idx[w] for w in story] for story, _, _ in triples]
        questions = [[word_idx[w] for w in question] for _, question, _ in triples]
        answers = np.zeros((len(triples), vocab_size))
        answers[np.arange(len(triples)), [word_idx[a] for _, _, a in triples]] = 1
        return (pad_sequences(stories, maxlen=story_maxlen),
                pad_sequences(questions, maxlen=query_maxlen), answers)

    x, xq, y = vectorize(train)
    tx, txq, ty = vectorize(test)

    RNN = layers.recurrent.LSTM
    EMBED_HIDDEN_SIZE = 50
    sentence = layers.Input(shape=(story_maxlen,), dtype='int32')
    encoded_sentence = layers.Embedding(vocab_size, EMBED_HIDDEN_SIZE)(sentence)
    encoded_sentence = layers.Dropout(0.3)(encoded_sentence)
    question = layers.Input(shape=(query_maxlen,), dtype='int32')
    encoded_question = layers.Embedding(vocab_size, EMBED_HIDDEN_SIZE)(question)
    encoded_question = layers.Dropout(0.3)(encoded_question)
    encoded_question = RNN(EMBED_HIDDEN_SIZE)(encoded_question)
    encoded_question = layers.RepeatVector(story_maxlen)(encoded_question)
    merged = layers.add([encoded_sentence, encoded_question])
    merged = RNN(EMBED_HIDDEN_SIZE)(merged)
    merged = layers.Dropout(0.3)(merged)
    preds = layers.Dense(vocab_size, activation='softmax')(merged)
    model = Model([sentence, question], preds)
    model.compile(optimizer='adam', loss='categorical_crossentropy', metrics=['accuracy'])
    history = model.fit([x, xq], y, batch_size=32, epochs=20, validation_split=0.05, verbose=0)
    loss, acc = model.evaluate([tx, txq], ty, batch_size=32, verbose=0)

    # The task's words: 4 names, 6 places, 3 objects, 'got', 'the', 'there', 'Where', 'is',
    # 'moved', 'went', 'journeyed', 'travelled', 'to', '.', '?': 25, so 26 with padding.
    # Stories of three 6-token sentences, questions of 5 tokens.
    # Two Embeddings 26*50 = 1,300 each; two LSTMs 4*(50*50 + 50*50 + 50) = 20,200 each;
    # Dense 50*26 + 26 = 1,326.
    assert vocab_size == 26 and (story_maxlen, query_maxlen) == (18, 5)
    assert model.count_params() == 2 * 1_300 + 2 * 20_200 + 1_326
    assert (x[:, -1] == word_idx['.']).all() and (xq[:, -1] == word_idx['?']).all()
    # The answer is the last place named: the model finds it (six places, chance is 1/6).
    assert history.history['loss'][-1] < history.history['loss'][0] / 4
    assert acc > 0.8


def test_babi_memnn(babi_home, monkeypatch):
    minidl.set_seed(802)
    train_stories, test_stories = babi_task(
        babi_home, monkeypatch, 'tasks_1-20_v1-2/en-10k/qa1_single-supporting-fact_{}.txt')
    word_idx = vocabulary(train_stories + test_stories)
    vocab_size = len(word_idx) + 1
    story_maxlen = max(len(story) for story, _, _ in train_stories + test_stories)
    query_maxlen = max(len(question) for _, question, _ in train_stories + test_stories)

    def vectorize(triples):
        # The example's answers are word indices (sparse_categorical_crossentropy).
        return (pad_sequences([[word_idx[w] for w in s] for s, _, _ in triples],
                              maxlen=story_maxlen),
                pad_sequences([[word_idx[w] for w in q] for _, q, _ in triples],
                              maxlen=query_maxlen),
                np.array([word_idx[a] for _, _, a in triples]))

    inputs_train, queries_train, answers_train = vectorize(train_stories)
    inputs_test, queries_test, answers_test = vectorize(test_stories)

    # Float placeholders, as in the example: the Embeddings take their indices as floats.
    input_sequence = Input((story_maxlen,))
    question = Input((query_maxlen,))
    input_encoder_m = Sequential()
    input_encoder_m.add(Embedding(input_dim=vocab_size, output_dim=64))
    input_encoder_m.add(Dropout(0.3))
    input_encoder_c = Sequential()
    input_encoder_c.add(Embedding(input_dim=vocab_size, output_dim=query_maxlen))
    input_encoder_c.add(Dropout(0.3))
    question_encoder = Sequential()
    question_encoder.add(Embedding(input_dim=vocab_size, output_dim=64,
                                   input_length=query_maxlen))
    question_encoder.add(Dropout(0.3))
    input_encoded_m = input_encoder_m(input_sequence)
    input_encoded_c = input_encoder_c(input_sequence)
    question_encoded = question_encoder(question)
    match = dot([input_encoded_m, question_encoded], axes=(2, 2))
    match = Activation('softmax')(match)
    response = add([match, input_encoded_c])
    response = Permute((2, 1))(response)
    answer = concatenate([response, question_encoded])
    answer = LSTM(32)(answer)
    answer = Dropout(0.3)(answer)
    answer = Dense(vocab_size)(answer)
    answer = Activation('softmax')(answer)
    model = Model([input_sequence, question], answer)
    model.compile(optimizer='rmsprop', loss='sparse_categorical_crossentropy',
                  metrics=['accuracy'])
    history = model.fit([inputs_train, queries_train], answers_train, batch_size=32, epochs=20,
                        validation_data=([inputs_test, queries_test], answers_test), verbose=0)

    # 4 names, 6 places, 4 verbs, 'moved', 'went', 'journeyed', 'travelled', 'to', 'the',
    # 'Where', 'is', '.', '?': 20 words, 21 with padding; stories of 2 or 4 sentences
    # of 6 tokens, questions of 4.
    # Embeddings 21*64 = 1,344 (twice) and 21*4 = 84; the LSTM reads 24 + 64 = 88 features:
    # 4*(32*88 + 32*32 + 32) = 15,488; Dense 32*21 + 21 = 693.
    assert vocab_size == 21 and (story_maxlen, query_maxlen) == (24, 4)
    assert model.count_params() == 2 * 1_344 + 84 + 15_488 + 693
    # The memory: softmax over the question positions of the story-question match, plus
    # the second story embedding, transposed: numpy from the embeddings (no dropout).
    response_model = Model([input_sequence, question], response)
    stories, questions = inputs_test[:5], queries_test[:5]
    memory_m = input_encoder_m.get_weights()[0][stories]
    memory_c = input_encoder_c.get_weights()[0][stories]
    query = question_encoder.get_weights()[0][questions]
    scores = np.einsum('bsd,bqd->bsq', memory_m, query)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    np.testing.assert_allclose(response_model.predict([stories, questions]),
                               (weights + memory_c).transpose(0, 2, 1), rtol=1e-5, atol=1e-6)
    losses = history.history['loss']
    assert losses[-1] < losses[0] / 4
    assert history.history['val_accuracy'][-1] > 0.8  # six places: chance is 1/6
    # pad_sequences pads at the front: a two-sentence story ends where a four-sentence one
    # does, after 12 zeros.
    short = [len(story) for story, _, _ in train_stories].index(12)
    assert not inputs_train[short, :12].any() and inputs_train[short, -1] == word_idx['.']


def test_pretrained_word_embeddings(newsgroups_and_glove):
    from minidl.initializers import Constant
    from minidl.preprocessing.text import Tokenizer
    from minidl.utils import to_categorical
    minidl.set_seed(803)
    glove_dir, text_data_dir = newsgroups_and_glove
    MAX_SEQUENCE_LENGTH, MAX_NUM_WORDS, EMBEDDING_DIM = 1000, 20000, 100

    embeddings_index = {}
    with open(glove_dir / 'glove.6B.100d.txt') as f:
        for line in f:
            values = line.split()
            embeddings_index[values[0]] = np.asarray(values[1:], dtype='float32')
    texts, labels_index, labels = [], {}, []
    for name in sorted(p.name for p in text_data_dir.iterdir()):
        path = text_data_dir / name
        labels_index[name] = len(labels_index)
        for post in sorted(path.iterdir()):
            if post.name.isdigit():
                text = post.read_text(encoding='latin-1')
                texts.append(text[max(text.find('\n\n'), 0):])  # the header skipped
                labels.append(labels_index[name])
    tokenizer = Tokenizer(num_words=MAX_NUM_WORDS)
    tokenizer.fit_on_texts(texts)
    sequences = tokenizer.texts_to_sequences(texts)
    word_index = tokenizer.word_index
    data = pad_sequences(sequences, maxlen=MAX_SEQUENCE_LENGTH)
    labels = to_categorical(np.asarray(labels))
    indices = np.random.default_rng(803).permutation(len(data))
    data, labels = data[indices], labels[indices]
    num_validation_samples = int(0.2 * data.shape[0])
    x_train, y_train = data[:-num_validation_samples], labels[:-num_validation_samples]
    x_val, y_val = data[-num_validation_samples:], labels[-num_validation_samples:]

    num_words = min(MAX_NUM_WORDS, len(word_index)) + 1
    embedding_matrix = np.zeros((num_words, EMBEDDING_DIM))
    for word, i in word_index.items():
        if i <= MAX_NUM_WORDS and word in embeddings_index:
            embedding_matrix[i] = embeddings_index[word]
    embedding_layer = Embedding(num_words, EMBEDDING_DIM,
                                embeddings_initializer=Constant(embedding_matrix),
                                input_length=MAX_SEQUENCE_LENGTH, trainable=False)
    sequence_input = Input(shape=(MAX_SEQUENCE_LENGTH,), dtype='int32')
    x = embedding_layer(sequence_input)
    x = Conv1D(128, 5, activation='relu')(x)
    x = MaxPooling1D(5)(x)
    x = Conv1D(128, 5, activation='relu')(x)
    x = MaxPooling1D(5)(x)
    x = Conv1D(128, 5, activation='relu')(x)
    x = GlobalMaxPooling1D()(x)
    x = Dense(128, activation='relu')(x)
    preds = Dense(len(labels_index), activation='softmax')(x)
    model = Model(sequence_input, preds)
    model.compile(loss='categorical_crossentropy', optimizer='rmsprop', metrics=['acc'])
    history = model.fit(x_train, y_train, batch_size=32, epochs=10,
                        validation_data=(x_val, y_val), verbose=0)

    # The headers are skipped: the words are the 40 signature words and the 1,900 filler
    # words (conftest), 1,941 rows with padding. Embedding 1941*100 = 194,100 (frozen);
    # Conv1D 5*100*128 + 128 = 64,128, then 5*128*128 + 128 = 82,048 twice; Dense
    # 128*128 + 128 = 16,512 and 128*4 + 4 = 516.
    assert num_words == 1941 and len(texts) == 160
    trainable = 64_128 + 2 * 82_048 + 16_512 + 516
    assert model.count_params() == 194_100 + trainable
    assert sum(w.size for w in model.trainable_weights) == trainable
    # Frozen: the GloVe rows are still there after training; words without a vector are 0.
    np.testing.assert_array_equal(embedding_layer.get_weights()[0],
                                  embedding_matrix.astype('float32'))
    assert not embedding_matrix[word_index['w1999']].any()
    assert history.history['loss'][-1] < history.history['loss'][0] / 4
    assert history.history['val_acc'][-1] > 0.75  # four groups: chance is 1/4


def test_lstm_seq2seq_restore(sentence_pairs_file, tmp_path):
    """lstm_seq2seq trains and saves s2s.h5; lstm_seq2seq_restore loads it and takes the
    encoder and decoder apart by layer index to decode."""
    minidl.set_seed(804)
    latent_dim = 64  # the examples' 256, cut
    lines = sentence_pairs_file.read_text(encoding='utf-8').split('\n')
    pairs = [line.split('\t') for line in lines[:min(40, len(lines) - 1)]]
    input_texts = [source for source, _ in pairs]
    target_texts = ['\t' + target + '\n' for _, target in pairs]
    input_characters = sorted(set(''.join(input_texts)))
    target_characters = sorted(set(''.join(target_texts)))
    max_encoder_seq_length = max(len(text) for text in input_texts)
    max_decoder_seq_length = max(len(text) for text in target_texts)
    input_token_index = {char: i for i, char in enumerate(input_characters)}
    target_token_index = {char: i for i, char in enumerate(target_characters)}
    encoder_input_data = np.zeros((len(pairs), max_encoder_seq_length, len(input_characters)),
                                  dtype='float32')
    decoder_input_data = np.zeros((len(pairs), max_decoder_seq_length,
                                   len(target_characters)), dtype='float32')
    decoder_target_data = np.zeros_like(decoder_input_data)
    for i, (input_text, target_text) in enumerate(zip(input_texts, target_texts)):
        for t, char in enumerate(input_text):
            encoder_input_data[i, t, input_token_index[char]] = 1.
        for t, char in enumerate(target_text):
            decoder_input_data[i, t, target_token_index[char]] = 1.
            if t > 0:
                decoder_target_data[i, t - 1, target_token_index[char]] = 1.

    # lstm_seq2seq: train and save.
    encoder_inputs = Input(shape=(None, len(input_characters)))
    _, state_h, state_c = LSTM(latent_dim, return_state=True)(encoder_inputs)
    decoder_inputs = Input(shape=(None, len(target_characters)))
    decoder_outputs, _, _ = LSTM(latent_dim, return_sequences=True, return_state=True)(
        decoder_inputs, initial_state=[state_h, state_c])
    decoder_outputs = Dense(len(target_characters), activation='softmax')(decoder_outputs)
    trained = Model([encoder_inputs, decoder_inputs], decoder_outputs)
    trained.compile(optimizer='rmsprop', loss='categorical_crossentropy')
    history = trained.fit([encoder_input_data, decoder_input_data], decoder_target_data,
                          batch_size=16, epochs=3, validation_split=0.2, verbose=0)
    trained.save(str(tmp_path / 's2s.h5'))

    # lstm_seq2seq_restore, in a model of its own.
    model = load_model(str(tmp_path / 's2s.h5'))
    encoder_inputs = model.input[0]   # input_1
    encoder_outputs, state_h_enc, state_c_enc = model.layers[2].output   # lstm_1
    encoder_model = Model(encoder_inputs, [state_h_enc, state_c_enc])
    decoder_inputs = model.input[1]   # input_2
    decoder_state_input_h = Input(shape=(latent_dim,), name='input_3')
    decoder_state_input_c = Input(shape=(latent_dim,), name='input_4')
    decoder_states_inputs = [decoder_state_input_h, decoder_state_input_c]
    decoder_lstm = model.layers[3]
    decoder_outputs, state_h_dec, state_c_dec = decoder_lstm(
        decoder_inputs, initial_state=decoder_states_inputs)
    decoder_dense = model.layers[4]
    decoder_outputs = decoder_dense(decoder_outputs)
    decoder_model = Model([decoder_inputs] + decoder_states_inputs,
                          [decoder_outputs, state_h_dec, state_c_dec])
    reverse_target_char_index = {i: char for char, i in target_token_index.items()}

    def decode_sequence(input_seq):
        states_value = encoder_model.predict(input_seq)
        target_seq = np.zeros((1, 1, len(target_characters)))
        target_seq[0, 0, target_token_index['\t']] = 1.
        decoded_sentence = ''
        while True:
            output_tokens, h, c = decoder_model.predict([target_seq] + states_value)
            sampled_token_index = np.argmax(output_tokens[0, -1, :])
            decoded_sentence += reverse_target_char_index[sampled_token_index]
            if decoded_sentence[-1] == '\n' or len(decoded_sentence) > max_decoder_seq_length:
                return decoded_sentence
            target_seq = np.zeros((1, 1, len(target_characters)))
            target_seq[0, 0, sampled_token_index] = 1.
            states_value = [h, c]

    # The layers in Keras 2's order: the two inputs, then the LSTMs and the Dense.
    assert [type(layer).__name__ for layer in model.layers] == [
        'InputLayer', 'InputLayer', 'LSTM', 'LSTM', 'Dense']
    # 18 characters in, 20 out (conftest). Encoder LSTM 4*(18*64 + 64*64 + 64) = 21,248;
    # decoder LSTM 4*(20*64 + 64*64 + 64) = 21,760; Dense 64*20 + 20 = 1,300.
    assert model.count_params() == 21_248 + 21_760 + 1_300
    assert history.history['loss'][-1] < history.history['loss'][0]
    # Fed the true previous characters one at a time, the restored pieces reproduce the
    # trained model's teacher-forced predictions.
    expected = trained.predict([encoder_input_data[:1], decoder_input_data[:1]])
    states = encoder_model.predict(encoder_input_data[:1])
    for step in range(len(target_texts[0]) - 1):
        probabilities, h, c = decoder_model.predict(
            [decoder_input_data[:1, step:step + 1]] + states)
        np.testing.assert_allclose(probabilities[0, 0], expected[0, step], rtol=1e-4,
                                   atol=1e-6)
        states = [h, c]
    for seq_index in range(3):
        decoded = decode_sequence(encoder_input_data[seq_index:seq_index + 1])
        assert 1 <= len(decoded) <= max_decoder_seq_length + 1
        assert set(decoded) <= set(target_characters)

