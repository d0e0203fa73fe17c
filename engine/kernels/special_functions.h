// The special functions of torch.special that the elementwise functors call (unary_ops.h,
// binary_ops.h): modified Bessel functions I0, I1, K0, K1 (plain and exponentially scaled),
// Bessel functions J0, J1, Y0, Y1, the spherical j0, Airy's Ai, the normal distribution's
// inverse (ndtri) and log (log_ndtr), the scaled complementary error function erfcx, and the
// orthogonal polynomials (Chebyshev T/U/V/W and their shifted forms, Hermite H and He,
// Laguerre L, Legendre P) of a degree n.
//
// The approximations are those of the Cephes Math Library (Stephen L. Moshier): its Chebyshev
// series (chbevl) and rational functions (polevl), with its published coefficient tables, as
// torch 1.13 evaluates them; the polynomials by their three-term recurrences and, inside
// [-1, 1], their trigonometric forms, with torch's conventions for n < 0 (0), a non-integer n
// (truncated toward zero) and a NaN or infinite n (0). Where torch 1.13 evaluates Cephes'
// p1evl denominators (leading coefficient 1, left out of the tables) without that 1 (Bessel J0,
// J1, Y0, Y1 and Airy Ai), these functions keep Cephes' form: torch's values are up to 2e-5 off
// there, these within about 1e-15. C is float or double (float16/bfloat16 are computed in
// float). Host and device code (TENSORD_HD).
#ifndef TENSORD_ENGINE_KERNELS_SPECIAL_FUNCTIONS_H_
#define TENSORD_ENGINE_KERNELS_SPECIAL_FUNCTIONS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "engine/core/host_device.h"

namespace tensord::engine {

// Cephes' chbevl: the Chebyshev series with coefficients c[0 .. n) at x.
template <typename C>
TENSORD_HD inline C Chebyshev(C x, const double* c, int n) {
  C b0 = C(c[0]), b1 = C(0), b2 = C(0);
  for (int i = 1; i < n; ++i) {
    b2 = b1;
    b1 = b0;
    b0 = x * b1 - b2 + C(c[i]);
  }
  return C(0.5) * (b0 - b2);
}

// Cephes' polevl: c[0] x^degree + c[1] x^(degree - 1) + ... + c[degree].
template <typename C>
TENSORD_HD inline C Polevl(C x, const double* c, int degree) {
  C r = C(c[0]);
  for (int i = 1; i <= degree; ++i) r = r * x + C(c[i]);
  return r;
}

// ---- Modified Bessel functions of the first kind ------------------------------------------

// The Chebyshev series of I0 for x = |v|: exp(-x) I0(x) on [0, 8], exp(-x) sqrt(x) I0(x) beyond.
template <typename C>
TENSORD_HD inline C BesselI0Series(C x) {
  const double a[] = {
      -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
      1.71539128555513303061E-15,  -1.16853328779934516808E-14, 7.67618549860493561688E-14,
      -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
      9.67580903537323691224E-11,  -5.18979560163526290666E-10, 2.65982372468238665035E-9,
      -1.30002500998624804212E-8,  6.04699502254191894932E-8,  -2.67079385394061173391E-7,
      1.11738753912010371815E-6,   -4.41673835845875056359E-6, 1.64484480707288970893E-5,
      -5.75419501008210370398E-5,  1.88502885095841655729E-4,  -5.76375574538582365885E-4,
      1.63947561694133579842E-3,   -4.32430999505057594430E-3, 1.05464603945949983183E-2,
      -2.37374148058994688156E-2,  4.93052842396707084878E-2,  -9.49010970480476444210E-2,
      1.71620901522208775349E-1,   -3.04682672343198398683E-1, 6.76795274409476084995E-1};
  const double b[] = {
      -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
      3.46122286769746109310E-17,  -2.82762398051658348494E-16, -3.42548561967721913462E-16,
      1.77256013305652638360E-15,  3.81168066935262242075E-15,  -9.55484669882830764870E-15,
      -4.15056934728722208663E-14, 1.54008621752140982691E-14,  3.85277838274214270114E-13,
      7.18012445138366623367E-13,  -1.79417853150680611778E-12, -1.32158118404477131188E-11,
      -3.14991652796324136454E-11, 1.18891471078464383424E-11,  4.94060238822496958910E-10,
      3.39623202570838634515E-9,   2.26666899049817806459E-8,   2.04891858946906374183E-7,
      2.89137052083475648297E-6,   6.88975834691682398426E-5,   3.36911647825569408990E-3,
      8.04490411014108831608E-1};
  if (x <= C(8)) return Chebyshev<C>(x / C(2) - C(2), a, 30);
  return Chebyshev<C>(C(32) / x - C(2), b, 25);
}

// I0(v), the modified Bessel function of order 0 (torch's i0 and modified_bessel_i0).
template <typename C>
TENSORD_HD inline C BesselI0(C v) {
  const C x = std::abs(v);
  if (x <= C(8)) return std::exp(x) * BesselI0Series<C>(x);
  return std::exp(x) * BesselI0Series<C>(x) / std::sqrt(x);
}

// exp(-|v|) I0(v).
template <typename C>
TENSORD_HD inline C BesselI0e(C v) {
  const C x = std::abs(v);
  if (x <= C(8)) return BesselI0Series<C>(x);
  return BesselI0Series<C>(x) / std::sqrt(x);
}

// The Chebyshev series of I1 for x = |v|: exp(-x) I1(x) / x on [0, 8], exp(-x) sqrt(x) I1(x)
// beyond.
template <typename C>
TENSORD_HD inline C BesselI1Series(C x) {
  const double a[] = {
      2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
      -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
      3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
      -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
      9.38153738649577178388E-9,  -4.44505912879632808065E-8, 2.00329475355213526229E-7,
      -8.56872026469545474066E-7, 3.47025130813767847674E-6,  -1.32731636560394358279E-5,
      4.78156510755005422638E-5,  -1.61760815825896745588E-4, 5.12285956168575772895E-4,
      -1.51357245063125314899E-3, 4.15642294431288815669E-3,  -1.05640848946261981558E-2,
      2.47264490306265168283E-2,  -5.29459812080949914269E-2, 1.02643658689847095384E-1,
      -1.76416518357834055153E-1, 2.52587186443633654823E-1};
  const double b[] = {
      7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17,
      -3.20952592199342395980E-17, 2.96262899764595013876E-16,  3.30820231092092828324E-16,
      -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
      4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
      -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,
      3.25260358301548823856E-11,  -1.89749581235054123450E-11, -5.58974346219658380687E-10,
      -3.83538038596423702205E-9,  -2.63146884688951950684E-8,  -2.51223623787020892529E-7,
      -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
      7.78576235018280120474E-1};
  if (x <= C(8)) return Chebyshev<C>(x / C(2) - C(2), a, 29);
  return Chebyshev<C>(C(32) / x - C(2), b, 25);
}

// I1(v), the modified Bessel function of order 1 (odd; torch's i1 and modified_bessel_i1).
template <typename C>
TENSORD_HD inline C BesselI1(C v) {
  const C x = std::abs(v);
  const C out = x <= C(8) ? std::exp(x) * x * BesselI1Series<C>(x)
                          : std::exp(x) * BesselI1Series<C>(x) / std::sqrt(x);
  return v < C(0) ? -out : out;
}

// exp(-|v|) I1(v).
template <typename C>
TENSORD_HD inline C BesselI1e(C v) {
  const C x = std::abs(v);
  const C out = x <= C(8) ? BesselI1Series<C>(x) * x : BesselI1Series<C>(x) / std::sqrt(x);
  return v < C(0) ? -out : out;
}

// ---- Modified Bessel functions of the second kind ------------------------------------------

// K0(x) (NaN below 0, +inf at 0); `scaled`: exp(x) K0(x).
template <typename C>
TENSORD_HD inline C BesselK0(C x, bool scaled) {
  const double a[] = {1.37446543561352307156E-16, 4.25981614279661018399E-14,
                      1.03496952576338420167E-11, 1.90451637722020886025E-9,
                      2.53479107902614945675E-7,  2.28621210311945178607E-5,
                      1.26461541144692592338E-3,  3.59799365153615016266E-2,
                      3.44289899924628486886E-1,  -5.35327393233902768720E-1};
  const double b[] = {
      5.30043377268626276149E-18,  -1.64758043015242134646E-17, 5.21039150503902756861E-17,
      -1.67823109680541210385E-16, 5.51205597852431940784E-16,  -1.84859337734377901440E-15,
      6.34007647740507060557E-15,  -2.22751332699166985548E-14, 8.03289077536357521100E-14,
      -2.98009692317273043925E-13, 1.14034058820847496303E-12,  -4.51459788337394416547E-12,
      1.85594911495471785253E-11,  -7.95748924447710747776E-11, 3.57739728140030116597E-10,
      -1.69753450938905987466E-9,  8.57403401741422608519E-9,   -4.66048989768794782956E-8,
      2.76681363944501510342E-7,   -1.83175552271911948767E-6,  1.39498137188764993662E-5,
      -1.28495495816278026384E-4,  1.56988388573005337491E-3,   -3.14481013119645005427E-2,
      2.44030308206595545468E0};
  if (x == C(0)) return std::numeric_limits<C>::infinity();
  if (x < C(0)) return std::numeric_limits<C>::quiet_NaN();
  if (x <= C(2)) {
    const C k = Chebyshev<C>(x * x - C(2), a, 10) - std::log(C(0.5) * x) * BesselI0<C>(x);
    return scaled ? k * std::exp(x) : k;
  }
  const C k = Chebyshev<C>(C(8) / x - C(2), b, 25);
  return scaled ? k / std::sqrt(x) : std::exp(-x) * k / std::sqrt(x);
}

// K1(x) (NaN below 0, +inf at 0); `scaled`: exp(x) K1(x).
template <typename C>
TENSORD_HD inline C BesselK1(C x, bool scaled) {
  const double a[] = {-7.02386347938628759343E-18, -2.42744985051936593393E-15,
                      -6.66690169419932900609E-13, -1.41148839263352776110E-10,
                      -2.21338763073472585583E-8,  -2.43340614156596823496E-6,
                      -1.73028895751305206302E-4,  -6.97572385963986435018E-3,
                      -1.22611180822657148235E-1,  -3.53155960776544875667E-1,
                      1.52530022733894777053E0};
  const double b[] = {
      -5.75674448366501715755E-18, 1.79405087314755922667E-17,  -5.68946255844285935196E-17,
      1.83809354436663880070E-16,  -6.05704724837331885336E-16, 2.03870316562433424052E-15,
      -7.01983709041831346144E-15, 2.47715442448130437068E-14,  -8.97670518232499435011E-14,
      3.34841966607842919884E-13,  -1.28917396095102890680E-12, 5.13963967348173025100E-12,
      -2.12996783842756842877E-11, 9.21831518760500529508E-11,  -4.19035475934189648750E-10,
      2.01504975519703286596E-9,   -1.03457624656780970260E-8,  5.74108412545004946722E-8,
      -3.50196060308781257119E-7,  2.40648494783721712015E-6,   -1.93619797416608296024E-5,
      1.95215518471351631108E-4,   -2.85781685962277938680E-3,  1.03923736576817238437E-1,
      2.72062619048444266945E0};
  if (x == C(0)) return std::numeric_limits<C>::infinity();
  if (x < C(0)) return std::numeric_limits<C>::quiet_NaN();
  if (x <= C(2)) {
    const C k = std::log(C(0.5) * x) * BesselI1<C>(x) + Chebyshev<C>(x * x - C(2), a, 11) / x;
    return scaled ? k * std::exp(x) : k;
  }
  const C k = Chebyshev<C>(C(8) / x - C(2), b, 25);
  return scaled ? k / std::sqrt(x) : std::exp(-x) * k / std::sqrt(x);
}

// ---- Bessel functions of the first and second kind -----------------------------------------

// Hankel's asymptotic form beyond 5: (P cos(x - phase) - 5/x Q sin(x - phase)) sqrt(2 / (pi x))
// for J (`second_kind`: P sin + 5/x Q cos, for Y), with P = pp/pq and Q = qp/qq rational in
// 25 / x^2. `order` 0 or 1 chooses the tables.
template <typename C>
TENSORD_HD inline C BesselLargeArgument(C x, int order, bool second_kind) {
  const double pp0[] = {7.96936729297347051624E-4, 8.28352392107440799803E-2,
                        1.23953371646414299388E0,  5.44725003058768775090E0,
                        8.74716500199817011941E0,  5.30324038235394892183E0,
                        9.99999999999999997821E-1};
  const double pq0[] = {9.24408810558863637013E-4, 8.56288474354474431428E-2,
                        1.25352743901058953537E0,  5.47097740330417105182E0,
                        8.76190883237069594232E0,  5.30605288235394617618E0,
                        1.00000000000000000218E0};
  const double qp0[] = {-1.13663838898469149931E-2, -1.28252718670509318512E0,
                        -1.95539544257735972385E1,  -9.32060152123768231369E1,
                        -1.77681167980488050595E2,  -1.47077505154951170175E2,
                        -5.14105326766599330220E1,  -6.05014350600728481186E0};
  const double qq0[] = {6.43178256118178023184E1, 8.56430025976980587198E2,
                        3.88240183605401609683E3, 7.24046774195652478189E3,
                        5.93072701187316984827E3, 2.06209331660327847417E3,
                        2.42005740240291393179E2};
  const double pp1[] = {7.62125616208173112003E-4, 7.31397056940917570436E-2,
                        1.12719608129684925192E0,  5.11207951146807644818E0,
                        8.42404590141772420927E0,  5.21451598682361504063E0,
                        1.00000000000000000254E0};
  const double pq1[] = {5.71323128072548699714E-4, 6.88455908754495404082E-2,
                        1.10514232634061696926E0,  5.07386386128601488557E0,
                        8.39985554327604159757E0,  5.20982848682361821619E0,
                        9.99999999999999997461E-1};
  const double qp1[] = {5.10862594750176621635E-2, 4.98213872951233449420E0,
                        7.58238284132545283818E1,  3.66779609360150777800E2,
                        7.10856304998926107277E2,  5.97489612400613639965E2,
                        2.11688757100572135698E2,  2.52070205858023719784E1};
  const double qq1[] = {7.42373277035675149943E1, 1.05644886038262816351E3,
                        4.98641058337653607651E3, 9.56231892404756170795E3,
                        7.99704160447350683650E3, 2.82619278517639096600E3,
                        3.36093607810698293419E2};
  const C z = order == 0 ? C(25) / (x * x) : C(5) / x * (C(5) / x);
  const C pp = Polevl<C>(z, order == 0 ? pp0 : pp1, 6);
  const C pq = Polevl<C>(z, order == 0 ? pq0 : pq1, 6);
  const C qp = Polevl<C>(z, order == 0 ? qp0 : qp1, 7);
  // qq's leading coefficient is 1 (Cephes' p1evl): the tables hold the rest.
  C qq = C(1);
  for (int i = 0; i < 7; ++i) qq = qq * z + C(order == 0 ? qq0[i] : qq1[i]);
  const C phase = order == 0 ? C(0.785398163397448309615660845819875721)
                             : C(2.356194490192344928846982537459627163);
  const C sqrt_2_over_pi = C(0.797884560802865355879892119868763737);
  if (second_kind) {
    return (pp / pq * std::sin(x - phase) + C(5) / x * (qp / qq) * std::cos(x - phase)) *
           sqrt_2_over_pi / std::sqrt(x);
  }
  return (pp / pq * std::cos(x - phase) - C(5) / x * (qp / qq) * std::sin(x - phase)) *
         sqrt_2_over_pi / std::sqrt(x);
}

// J0(x).
template <typename C>
TENSORD_HD inline C BesselJ0(C x) {
  const double rp[] = {-4.79443220978201773821E9, 1.95617491946556577543E12,
                       -2.49248344360967716204E14, 9.70862251047306323952E15};
  const double rq[] = {4.99563147152651017219E2,  1.73785401676374683123E5,
                       4.84409658339962045305E7,  1.11855537045356834862E10,
                       2.11277520115489217587E12, 3.10518229857422583814E14,
                       3.18121955943204943306E16, 1.71086294081043136091E18};
  if (x < C(0)) x = -x;
  if (x <= C(5)) {
    if (x < C(0.00001)) return C(1) - x * x / C(4);
    const C z = x * x;
    // rq's leading coefficient is 1.
    C q = C(1);
    for (int i = 0; i < 8; ++i) q = q * z + C(rq[i]);
    return (z - C(5.78318596294678452118E0)) * (z - C(3.04712623436620863991E1)) *
           Polevl<C>(z, rp, 3) / q;
  }
  return BesselLargeArgument<C>(x, 0, false);
}

// J1(x) (odd).
template <typename C>
TENSORD_HD inline C BesselJ1(C x) {
  const double rp[] = {-8.99971225705559398224E8, 4.52228297998194034323E11,
                       -7.27494245221818276015E13, 3.68295732863852883286E15};
  const double rq[] = {6.20836478118054335476E2,  2.56987256757748830383E5,
                       8.35146791431949253037E7,  2.21511595479792499675E10,
                       4.74914122079991414898E12, 7.84369607876235854894E14,
                       8.95222336184627338078E16, 5.32278620332680085395E18};
  const C sign = x < C(0) ? C(-1) : C(1);
  x = x < C(0) ? -x : x;
  if (x <= C(5)) {
    const C z = x * x;
    C q = C(1);
    for (int i = 0; i < 8; ++i) q = q * z + C(rq[i]);
    return sign * (Polevl<C>(z, rp, 3) / q * x * (z - C(1.46819706421238932572E1)) *
                   (z - C(4.92184563216946036703E1)));
  }
  return sign * BesselLargeArgument<C>(x, 1, false);
}

// Y0(x) (NaN below 0, -inf at 0).
template <typename C>
TENSORD_HD inline C BesselY0(C x) {
  const double yp[] = {1.55924367855235737965E4,   -1.46639295903971606143E7,
                       5.43526477051876500413E9,   -9.82136065717911466409E11,
                       8.75906394395366999549E13,  -3.46628303384729719441E15,
                       4.42733268572569800351E16,  -1.84950800436986690637E16};
  const double yq[] = {1.04128353664259848412E3,  6.26107330137134956842E5,
                       2.68919633393814121987E8,  8.64002487103935000337E10,
                       2.02979612750105546709E13, 3.17157752842975028269E15,
                       2.50596256172653059228E17};
  if (x <= C(5)) {
    if (x == C(0)) return -std::numeric_limits<C>::infinity();
    if (x < C(0)) return std::numeric_limits<C>::quiet_NaN();
    const C z = x * x;
    C q = C(1);
    for (int i = 0; i < 7; ++i) q = q * z + C(yq[i]);
    return Polevl<C>(z, yp, 7) / q +
           C(0.636619772367581343075535053490057448) * std::log(x) * BesselJ0<C>(x);
  }
  return BesselLargeArgument<C>(x, 0, true);
}

// Y1(x) (NaN below 0, -inf at 0).
template <typename C>
TENSORD_HD inline C BesselY1(C x) {
  const double yp[] = {1.26320474790178026440E9,  -6.47355876379160291031E11,
                       1.14509511541823727583E14, -8.12770255501325109621E15,
                       2.02439475713594898196E17, -7.78877196265950026825E17};
  const double yq[] = {5.94301592346128195359E2,  2.35564092943068577943E5,
                       7.34811944459721705660E7,  1.87601316108706159478E10,
                       3.88231277496238566008E12, 6.20557727146953693363E14,
                       6.87141087355300489866E16, 3.97270608116560655612E18};
  if (x <= C(5)) {
    if (x == C(0)) return -std::numeric_limits<C>::infinity();
    if (x <= C(0)) return std::numeric_limits<C>::quiet_NaN();
    const C z = x * x;
    C q = C(1);
    for (int i = 0; i < 8; ++i) q = q * z + C(yq[i]);
    return x * (Polevl<C>(z, yp, 5) / q) +
           C(0.636619772367581343075535053490057448) * (BesselJ1<C>(x) * std::log(x) - C(1) / x);
  }
  return BesselLargeArgument<C>(x, 1, true);
}

// j0(x) = sin(x) / x, by its Taylor series below 1/2.
template <typename C>
TENSORD_HD inline C SphericalBesselJ0(C x) {
  if (std::isinf(x)) return C(0);
  if (std::abs(x) < C(0.5)) {
    const C z = x * x;
    return C(1) + z * (C(-1) / C(6) + z * (C(1) / C(120) + z * (C(-1) / C(5040) +
           z * (C(1) / C(362880) + z * (C(-1) / C(39916800) + z * (C(1) / C(6227020800)))))));
  }
  return std::sin(x) / x;
}

// ---- Airy function Ai -----------------------------------------------------------------------

template <typename C>
TENSORD_HD inline C AiryAi(C x) {
  const double an[] = {3.46538101525629032477E-1, 1.20075952739645805542E1,
                       7.62796053615234516538E1,  1.68089224934630576269E2,
                       1.59756391350164413639E2,  7.05360906840444183113E1,
                       1.40264691163389668864E1,  9.99999999999999995305E-1};
  const double ad[] = {5.67594532638770212846E-1, 1.47562562584847203173E1,
                       8.45138970141474626562E1,  1.77318088145400459522E2,
                       1.64234692871529701831E2,  7.14778400825575695274E1,
                       1.40959135607834029598E1,  1.00000000000000000470E0};
  const double afn[] = {-1.31696323418331795333E-1, -6.26456544431912369773E-1,
                        -6.93158036036933542233E-1, -2.79779981545119124951E-1,
                        -4.91900132609500318020E-2, -4.06265923594885404393E-3,
                        -1.59276496239262096340E-4, -2.77649108155232920844E-6,
                        -1.67787698489114633780E-8};
  const double afd[] = {1.33560420706553243746E1, 3.26825032795224613948E1,
                        2.67367040941499554804E1, 9.18707402907259625840E0,
                        1.47529146771666414581E0, 1.15687173795188044134E-1,
                        4.40291641615211203805E-3, 7.54720348287414296618E-5,
                        4.51850092970580378464E-7};
  const double agn[] = {1.97339932091685679179E-2, 3.91103029615688277255E-1,
                        1.06579897599595591108E0,  9.39169229816650230044E-1,
                        3.51465656105547619242E-1, 6.33888919628925490927E-2,
                        5.85804113048388458567E-3, 2.82851600836737019778E-4,
                        6.98793669997260967291E-6, 8.11789239554389293311E-8,
                        3.41551784765923618484E-10};
  const double agd[] = {9.30892908077441974853E0,  1.98352928718312140417E1,
                        1.55646628932864612953E1,  5.47686069422975497931E0,
                        9.54293611618961883998E-1, 8.64580826352392193095E-2,
                        4.12656523824222607191E-3, 1.01259085116509135510E-4,
                        1.17166733214413521882E-6, 4.91834570062930015649E-9};
  const C inv_sqrt_pi = C(5.64189583547756286948E-1);
  if (std::isinf(x)) return std::numeric_limits<C>::quiet_NaN();
  if (x > C(103.892)) return C(0);
  if (x < C(-2.09)) {
    // The oscillating tail: modulus and phase as rational functions of 1 / zeta.
    const C zeta = C(-2) * x * std::sqrt(-x) / C(3);
    const C z = C(1) / zeta;
    const C zz = z * z;
    // afd, agd: Cephes' p1evl, the leading coefficient 1 left out of the tables.
    C fd = C(1), gd = C(1);
    for (int i = 0; i < 9; ++i) fd = fd * zz + C(afd[i]);
    for (int i = 0; i < 10; ++i) gd = gd * zz + C(agd[i]);
    const C fn = Polevl<C>(zz, afn, 8), gn = Polevl<C>(zz, agn, 10);
    const C t = zeta + C(0.25) * C(3.14159265358979323846264338327950288);
    return inv_sqrt_pi / std::sqrt(std::sqrt(-x)) *
           (std::sin(t) * (C(1) + zz * fn / fd) - std::cos(t) * (z * gn / gd));
  }
  C ai = C(0);
  bool asymptotic = false;
  if (x >= C(2.09)) {
    asymptotic = true;
    const C zeta = C(2) * x * std::sqrt(x) / C(3);
    const C w = C(1) / zeta;
    ai = inv_sqrt_pi * (Polevl<C>(w, an, 7) / Polevl<C>(w, ad, 7)) /
         (C(2) * std::sqrt(std::sqrt(x)) * std::exp(zeta));
    if (x > C(8.3203353)) return ai;
  }
  // The power series f(x) and g(x) of Ai = c1 f - c2 g.
  C f = C(1), g = x, k = C(1), m = C(1), n = x, t = C(1);
  const C z = x * x * x;
  while (t > std::numeric_limits<C>::epsilon()) {
    m *= z;
    k += C(1);
    m /= k;
    n *= z;
    k += C(1);
    n /= k;
    m /= k;
    f += m;
    k += C(1);
    n /= k;
    g += n;
    t = std::abs(m / f);
  }
  if (!asymptotic) return C(0.355028053887817239260) * f - C(0.258819403792806798405) * g;
  return ai;
}

// ---- The normal distribution ----------------------------------------------------------------

// The x at which the standard normal's distribution function is y (Cephes ndtri).
template <typename C>
TENSORD_HD inline C Ndtri(C y0) {
  const double p0[] = {-5.99633501014107895267E1, 9.80010754185999661536E1,
                       -5.66762857469070293439E1, 1.39312609387279679503E1,
                       -1.23916583867381258016E0};
  const double q0[] = {1.00000000000000000000E0,  1.95448858338141759834E0,
                       4.67627912898881538453E0,  8.63602421390890590575E1,
                       -2.25462687854119370527E2, 2.00260212380060660359E2,
                       -8.20372256168333339912E1, 1.59056225126211695515E1,
                       -1.18331621121330003142E0};
  const double p1[] = {4.05544892305962419923E0,   3.15251094599893866154E1,
                       5.71628192246421288162E1,   4.40805073893200834700E1,
                       1.46849561928858024014E1,   2.18663306850790267539E0,
                       -1.40256079171354495875E-1, -3.50424626827848203418E-2,
                       -8.57456785154685413611E-4};
  const double q1[] = {1.00000000000000000000E0,   1.57799883256466749731E1,
                       4.53907635128879210584E1,   4.13172038254672030440E1,
                       1.50425385692907503408E1,   2.50464946208309415979E0,
                       -1.42182922854787788574E-1, -3.80806407691578277194E-2,
                       -9.33259480895457427372E-4};
  const double p2[] = {3.23774891776946035970E0,  6.91522889068984211695E0,
                       3.93881025292474443415E0,  1.33303460815807542389E0,
                       2.01485389549179081538E-1, 1.23716634817820021358E-2,
                       3.01581553508235416007E-4, 2.65806974686737550832E-6,
                       6.23974539184983293730E-9};
  const double q2[] = {1.00000000000000000000E0,  6.02427039364742014255E0,
                       3.67983563856160859403E0,  1.37702099489081330271E0,
                       2.16236993594496635890E-1, 1.34204006088543189037E-2,
                       3.28014464682127739104E-4, 2.89247864745380683936E-6,
                       6.79019408009981274425E-9};
  const C one = C(1);
  if (y0 == C(0)) return -std::numeric_limits<C>::infinity();
  if (y0 == one) return std::numeric_limits<C>::infinity();
  if (y0 < C(0) || y0 > one) return std::numeric_limits<C>::quiet_NaN();
  const C exp_minus_2 = C(0.13533528323661269189);  // exp(-2)
  bool negate = true;
  C y = y0;
  if (y > one - exp_minus_2) {
    y = one - y;
    negate = false;
  }
  if (y > exp_minus_2) {
    y = y - C(0.5);
    const C y2 = y * y;
    const C x = y + y * (y2 * Polevl<C>(y2, p0, 4) / Polevl<C>(y2, q0, 8));
    return x * C(2.50662827463100050242E0);  // sqrt(2 pi)
  }
  const C x = std::sqrt(C(-2) * std::log(y));
  const C x0 = x - std::log(x) / x;
  const C z = one / x;
  const C x1 = x < C(8) ? z * Polevl<C>(z, p1, 8) / Polevl<C>(z, q1, 8)
                        : z * Polevl<C>(z, p2, 8) / Polevl<C>(z, q2, 8);
  return negate ? -(x0 - x1) : x0 - x1;
}

// erfcx(x) = exp(x^2) erfc(x), in double: exp(x^2) with x^2 split exactly (fma) times erfc
// up to 25; beyond, Laplace's continued fraction (20 levels: below 1e-17 there); for x < 0,
// 2 exp(x^2) - erfcx(-x).
TENSORD_HD inline double ExpSquared(double x) {
  const double hi = x * x;
  const double lo = std::fma(x, x, -hi);  // x^2 = hi + lo exactly
  return std::exp(hi) * (1.0 + lo);
}

TENSORD_HD inline double ErfcxPositive(double x) {
  if (x < 25.0) return ExpSquared(x) * std::erfc(x);
  // 1 / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))).
  double t = x;
  for (int k = 20; k >= 1; --k) t = x + 0.5 * k / t;
  return 0.56418958354775628694807945156 / t;
}

template <typename C>
TENSORD_HD inline C Erfcx(C v) {
  const double x = static_cast<double>(v);
  if (x != x) return v;
  if (x >= 0) return static_cast<C>(ErfcxPositive(x));
  if (x < -26.7) return std::numeric_limits<C>::infinity();
  return static_cast<C>(2.0 * ExpSquared(x) - ErfcxPositive(-x));
}

// log of the standard normal's distribution function: through erfcx below -1 (where the
// distribution function underflows), log1p of -erfc / 2 above.
template <typename C>
TENSORD_HD inline C LogNdtr(C x) {
  const C t = x * C(0.707106781186547524400844362104849039);
  if (x < C(-1)) return std::log(Erfcx<C>(-t) / C(2)) - t * t;
  return std::log1p(-std::erfc(t) / C(2));
}

// ---- Orthogonal polynomials -----------------------------------------------------------------

// A degree given as a floating-point number, as torch converts it: truncated toward zero; NaN,
// infinities and values beyond int64 become INT64_MIN (x86's conversion), a negative degree.
template <typename C>
TENSORD_HD inline int64_t PolynomialDegree(C n) {
  const double d = static_cast<double>(n);
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
    return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(d);
}

// The recurrence p_{k+1} = 2 s p_k - p_{k-1} from p_0 = 1 and p_1 = first, up to degree n
// (n >= 2), stopping at a NaN (a NaN first term is the result).
template <typename C>
TENSORD_HD inline C ChebyshevRecurrence(C s, C first, int64_t n) {
  C p = C(1), q = first, r = first;
  for (int64_t k = 2; k <= n && !std::isnan(q); ++k) {
    r = (s + s) * q - p;
    p = q;
    q = r;
  }
  return r;
}

// The four kinds of Chebyshev polynomials, T_n(cos t) = cos(n t), U_n = sin((n+1) t) / sin t,
// V_n = cos((n+1/2) t) / cos(t/2), W_n = sin((n+1/2) t) / sin(t/2), and their shifted forms
// T*_n(x) = T_n(2x - 1) …, as torch's: the values at the ends, the trigonometric form above a
// degree (torch's thresholds differ per kind and between the plain and shifted forms), the
// recurrence below it.
enum class ChebyshevKind { kT, kU, kV, kW };

// P_n(1) (`plus`) or P_n(-1) of kind P.
template <typename C>
TENSORD_HD inline C ChebyshevAtEnd(ChebyshevKind kind, int64_t n, bool plus) {
  const C sign = n % 2 == 0 ? C(1) : C(-1);
  switch (kind) {
    case ChebyshevKind::kT: return plus ? C(1) : sign;
    case ChebyshevKind::kU: return static_cast<C>(n + 1) * (plus ? C(1) : sign);
    case ChebyshevKind::kV: return plus ? C(1) : static_cast<C>(n + n + 1) * sign;
    case ChebyshevKind::kW: return plus ? static_cast<C>(n + n + 1) : sign;
  }
  return C(0);
}

// P_n(x) of kind P (shifted: P*_n(x)); 0 for a negative degree, as torch's.
template <typename C>
TENSORD_HD inline C ChebyshevPolynomial(ChebyshevKind kind, bool shifted, C x, int64_t n) {
  if (n < 0) return C(0);
  if (shifted ? x == C(1) : std::abs(x) == C(1)) return ChebyshevAtEnd<C>(kind, n, x > C(0));
  if (shifted && x == C(0)) return ChebyshevAtEnd<C>(kind, n, false);
  const C s = shifted ? x + x - C(1) : x;
  const int64_t trig_above = shifted ? (kind == ChebyshevKind::kW ? 4 : 6)
                                     : (kind == ChebyshevKind::kT ? 6 : 8);
  if (n > trig_above && std::abs(s) < C(1)) {
    const C theta = std::acos(s);
    const C half = static_cast<C>(n) + C(0.5);
    switch (kind) {
      case ChebyshevKind::kT: return std::cos(static_cast<C>(n) * theta);
      case ChebyshevKind::kU: {
        const C n1 = static_cast<C>(n + 1);
        if (std::sin(theta) != C(0)) return std::sin(n1 * theta) / std::sin(theta);
        return n1 * std::cos(n1 * theta) / s;
      }
      case ChebyshevKind::kV:
        if (std::sin(theta / C(2)) != C(1)) return std::cos(half * theta) / std::cos(theta / C(2));
        return ChebyshevAtEnd<C>(kind, n, false);
      case ChebyshevKind::kW:
        if (std::cos(theta / C(2)) != C(1)) return std::sin(half * theta) / std::sin(theta / C(2));
        return ChebyshevAtEnd<C>(kind, n, !shifted && s > C(0));  // torch's shifted form: ±1
    }
  }
  const C first = kind == ChebyshevKind::kT ? s
                : kind == ChebyshevKind::kU ? s + s
                : kind == ChebyshevKind::kV ? s + s - C(1) : s + s + C(1);
  if (n == 0) return C(1);
  if (n == 1) return first;
  return ChebyshevRecurrence<C>(s, first, n);
}

template <typename C>
TENSORD_HD inline C ChebyshevT(C x, int64_t n) {
  return ChebyshevPolynomial<C>(ChebyshevKind::kT, false, x, n);
}
template <typename C>
TENSORD_HD inline C ChebyshevU(C x, int64_t n) {
  return ChebyshevPolynomial<C>(ChebyshevKind::kU, false, x, n);
}
template <typename C>
TENSORD_HD inline C ChebyshevV(C x, int64_t n) {
  return ChebyshevPolynomial<C>(ChebyshevKind::kV, false, x, n);
}
template <typename C>
TENSORD_HD inline C ChebyshevW(C x, int64_t n) {
  return ChebyshevPolynomial<C>(ChebyshevKind::kW, false, x, n);
}
template <typename C>
TENSORD_HD inline C ShiftedChebyshevT(C x, int64_t n) {
  return ChebyshevPolynomial<C>(ChebyshevKind::kT, true, x, n);
}
template <typename C>
TENSORD_HD inline C ShiftedChebyshevU(C x, int64_t n) {
  return ChebyshevPolynomial<C>(ChebyshevKind::kU, true, x, n);
}
template <typename C>
TENSORD_HD inline C ShiftedChebyshevV(C x, int64_t n) {
  return ChebyshevPolynomial<C>(ChebyshevKind::kV, true, x, n);
}
template <typename C>
TENSORD_HD inline C ShiftedChebyshevW(C x, int64_t n) {
  return ChebyshevPolynomial<C>(ChebyshevKind::kW, true, x, n);
}

// Beyond this degree the Hermite polynomials are NaN, as torch's (their values overflow the
// type well before it).
template <typename C>
TENSORD_HD constexpr int64_t HermiteDegreeLimit() {
  return std::is_same_v<C, float> ? 128 : 512;
}

// The physicists' Hermite H_n(x): H_{k+1} = 2x H_k - 2k H_{k-1}.
template <typename C>
TENSORD_HD inline C HermiteH(C x, int64_t n) {
  if (n < 0) return C(0);
  if (n == 0) return C(1);
  if (n == 1) return x + x;
  if (n > HermiteDegreeLimit<C>()) return std::numeric_limits<C>::quiet_NaN();
  C p = C(1), q = x + x, r = C(0);
  for (int64_t k = 2; k < n + n; k += 2) {
    r = (x + x) * q - static_cast<C>(k) * p;
    p = q;
    q = r;
  }
  return r;
}

// The probabilists' Hermite He_n(x): He_{k+1} = x He_k - k He_{k-1}.
template <typename C>
TENSORD_HD inline C HermiteHe(C x, int64_t n) {
  if (n < 0) return C(0);
  if (n == 0) return C(1);
  if (n == 1) return x;
  if (n > HermiteDegreeLimit<C>()) return std::numeric_limits<C>::quiet_NaN();
  C p = C(1), q = x, r = C(0);
  for (int64_t k = 1; k < n; ++k) {
    r = x * q - static_cast<C>(k) * p;
    p = q;
    q = r;
  }
  return r;
}

// Laguerre L_n(x): (k + 1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}.
template <typename C>
TENSORD_HD inline C LaguerreL(C x, int64_t n) {
  if (n < 0) return C(0);
  if (std::abs(x) == C(0)) return C(1);
  if (n == 0) return C(1);
  if (n == 1) return C(1) - x;
  C p = C(1), q = C(1) - x, r = q;
  for (int64_t k = 1; k < n && !std::isnan(q); ++k) {
    r = ((static_cast<C>(k + k) + (C(1) - x)) * q - static_cast<C>(k) * p) /
        static_cast<C>(k + 1);
    p = q;
    q = r;
  }
  return r;
}

// Legendre P_n(x): (k + 1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}.
template <typename C>
TENSORD_HD inline C LegendreP(C x, int64_t n) {
  if (n < 0) return C(0);
  if (std::abs(x) == C(1)) return (x > C(0) || n % 2 == 0) ? C(1) : C(-1);
  if (n == 0) return C(1);
  if (n == 1) return x;
  C p = C(1), q = x, r = q;
  for (int64_t k = 1; k < n && !std::isnan(q); ++k) {
    r = (static_cast<C>(k + k + 1) * x * q - static_cast<C>(k) * p) / static_cast<C>(k + 1);
    p = q;
    q = r;
  }
  return r;
}

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_KERNELS_SPECIAL_FUNCTIONS_H_
